/**
 * `svc`: the command line of the client package.
 *
 *   svc import <sites|site-visits|messages> <file.csv|file.jsonl> [--rate <per-minute>] [--progress <path>] [--report <path>] [--retry-rejected]
 *   svc token [--json]
 *   svc get <path>
 *   svc listen --forward-to <url> [--events type,type] [--new-secret]
 *   svc trigger <visit-id> <action> [name=value | name:=json ...]
 *   svc --help, svc <command> --help, svc --version
 *
 * Exit codes: 0 success; 1 rows rejected or changed since created (import) or an error status (get); 2 usage, configuration,
 * credentials or scope refused, or another request the service refused (4xx); 3 interrupted by temporary
 * failures that outlasted the retries, or stopped by a signal (re-run the same command to resume).
 */
import { parseArgs } from 'node:util';
import { createClient } from '../client.js';
import { ApiError, CredentialsError, NetworkError, SiteServicesError } from '../errors.js';
import { systemRuntime } from '../retry.js';
import type { FetchLike } from '../transport.js';
import { type CliCredentials, credentialsFromEnv, movedPacket, UsageError } from './credentials.js';
import { DEFAULT_RATE, MAX_RATE } from './import/pace.js';
import { getCommand } from './get.js';
import { ProgressLogMismatch } from './import/progress-log.js';
import { writeRefusal } from './refusal.js';
import { RESOURCES, type ImportResource } from './import/rows.js';
import { type ImportReport, summary } from './import/report.js';
import { defaultSidePath, runImport } from './import/run.js';
import { parseForwardTo, runListen } from './listen/listen.js';
import { stateDirectory } from './listen/state.js';
import { missingWebSocket } from './listen/stream.js';
import { triggerCommand } from './trigger.js';
import {
  COMMAND_OPTIONS,
  COMMANDS,
  commandWord,
  isCommand,
  packageVersion,
  unknownCommand,
  unknownOption,
  USAGE,
  usageOf,
} from './usage.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 3 } as const;

/** Retries of the import: long enough (about a minute and a half) to ride out a restart of the service. */
const IMPORT_RETRY = { maxAttempts: 10, baseDelayMs: 1_000, maxDelayMs: 20_000 };

type Env = Record<string, string | undefined>;

/** What an embedding program (or a test) may inject. */
export interface MainOptions {
  /** The fetch every request goes through (default: the global fetch). */
  fetch?: FetchLike;
}

function parseRate(value: string | undefined, env: Env): number {
  if (value === undefined) return DEFAULT_RATE;
  const rate = Number(value);
  if (!Number.isFinite(rate) || rate <= 0)
    throw new UsageError(`--rate must be a positive number of rows per minute, got ${value}`);
  if (rate > MAX_RATE && env.SVC_ALLOW_RATE_ABOVE_LIMIT !== '1') {
    throw new UsageError(
      `--rate ${value} is above ${MAX_RATE} per minute: the service allows 100 requests per minute per address ("Rate limit" in the API reference, /docs). ` +
        'SVC_ALLOW_RATE_ABOVE_LIMIT=1 lifts this for test servers with a raised limit only.',
    );
  }
  return rate;
}

function clientFor(
  credentials: CliCredentials,
  options: MainOptions,
  progress?: (text: string) => void,
  retry?: typeof IMPORT_RETRY,
) {
  return createClient({
    ...credentials,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(retry ? { retry } : {}),
    ...(progress
      ? {
          onRetry: (event) =>
            progress(
              `retrying ${event.method} ${event.path} in ${(event.delayMs / 1000).toFixed(1)}s (${event.reason})`,
            ),
        }
      : {}),
  });
}

async function importCommand(
  positionals: string[],
  values: { rate?: string; progress?: string; report?: string; 'retry-rejected'?: boolean },
  env: Env,
  options: MainOptions,
): Promise<number> {
  const [resource, file] = positionals;
  if (resource && !RESOURCES.includes(resource as ImportResource))
    throw new UsageError(`svc import: unknown resource "${resource}": ${RESOURCES.join(', ')}\n${usageOf('import')}`);
  if (!resource || !file || positionals.length > 2) throw new UsageError(usageOf('import'));
  const rate = parseRate(values.rate, env);
  const credentials = credentialsFromEnv(env);
  let stop = false;
  // The first signal stops after the row in flight; a second one ends at once (the log stays consistent:
  // an unlogged row is sent again under its key next time).
  const onSignal = () => {
    if (stop) process.exit(EXIT.interrupted);
    stop = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const tty = Boolean(process.stderr.isTTY);
  const note = (text: string) => process.stderr.write(tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
  let report: ImportReport;
  try {
    report = await runImport(
      {
        resource: resource as ImportResource,
        file,
        ratePerMinute: rate,
        ...(values.progress ? { progressPath: values.progress } : {}),
        ...(values.report ? { reportPath: values.report } : {}),
        retryRejected: values['retry-rejected'] === true,
      },
      {
        client: clientFor(credentials, options, note, IMPORT_RETRY),
        runtime: systemRuntime,
        progressOut: process.stderr,
        tty,
        stopRequested: () => stop,
      },
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  process.stdout.write(summary(report, values.report ?? defaultSidePath(file, 'report.json')));
  if (report.status === 'refused') return EXIT.usage;
  if (report.status !== 'completed') return EXIT.interrupted;
  return report.rejected.length + report.changed.length > 0 ? EXIT.failed : EXIT.ok;
}

async function tokenCommand(positionals: string[], json: boolean, env: Env, options: MainOptions): Promise<number> {
  if (positionals.length > 0) throw new UsageError(usageOf('token'));
  const response = await clientFor(credentialsFromEnv(env), options).requestToken();
  // Bare, so that `curl -H "Authorization: Bearer $(svc token)"` works; --json for the expiry and scopes.
  process.stdout.write(json ? `${JSON.stringify(response, null, 2)}\n` : `${response.access_token}\n`);
  return EXIT.ok;
}

async function listenCommand(
  positionals: string[],
  values: { 'forward-to'?: string; events?: string; 'new-secret'?: boolean },
  env: Env,
  options: MainOptions,
): Promise<number> {
  if (positionals.length > 0) throw new UsageError(usageOf('listen'));
  const forwardTo = parseForwardTo(values['forward-to']);
  const noWebSocket = missingWebSocket();
  if (noWebSocket) throw new UsageError(noWebSocket);
  const eventTypes = values.events
    ?.split(',')
    .map((type) => type.trim())
    .filter(Boolean);
  const credentials = credentialsFromEnv(env);
  const stop = new AbortController();
  // The first signal closes the listener and exits; a second one exits at once.
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(EXIT.interrupted);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await runListen(
      { forwardTo, ...(eventTypes?.length ? { eventTypes } : {}), newSecret: values['new-secret'] === true },
      {
        client: clientFor(credentials, options),
        baseUrl: credentials.baseUrl,
        clientId: credentials.clientId,
        out: (line) => process.stdout.write(`${line}\n`),
        note: (line) => process.stderr.write(`${line}\n`),
        stateDirectory: stateDirectory(env),
        rebase: (at) =>
          movedPacket(env, { baseUrl: at, clientId: credentials.clientId }, (to) => clientFor(to, options)),
      },
      stop.signal,
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function parseArgv(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      rate: { type: 'string' },
      progress: { type: 'string' },
      report: { type: 'string' },
      'retry-rejected': { type: 'boolean' },
      json: { type: 'boolean' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      'new-secret': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
}

export async function main(argv: string[], env: Env, options: MainOptions = {}): Promise<number> {
  try {
    let parsed: ReturnType<typeof parseArgv>;
    try {
      parsed = parseArgv(argv);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw unknownOption((error as Error).message, commandWord(argv));
      // An option without its value (`svc listen --forward-to`): the command's usage, not every command's.
      const command = commandWord(argv);
      if (code?.startsWith('ERR_PARSE_ARGS') && isCommand(command))
        throw new UsageError(`svc ${command}: ${(error as Error).message}\n${usageOf(command)}`);
      throw error;
    }
    const { positionals, values } = parsed;
    const [first, ...others] = positionals;
    // `svc help` and `svc help <command>` as `svc --help` and `svc <command> --help`.
    const help = values.help === true || first === 'help';
    const [command, ...rest] = first === 'help' ? others : positionals;
    if (help) {
      process.stdout.write(`${isCommand(command) ? usageOf(command) : USAGE}\n`);
      return EXIT.ok;
    }
    if (values.version) {
      process.stdout.write(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    if (command === undefined) throw new UsageError(USAGE);
    if (!isCommand(command)) throw unknownCommand(command, rest);
    const foreign = Object.keys(values).filter((name) => !COMMAND_OPTIONS[command].includes(name));
    if (foreign.length > 0) {
      const owner = COMMANDS.find((other) => COMMAND_OPTIONS[other].includes(foreign[0]!));
      throw new UsageError(
        `svc ${command}: ${foreign.map((name) => `--${name}`).join(', ')} belong${foreign.length === 1 ? 's' : ''} to svc ${owner}\n${usageOf(command)}`,
      );
    }
    switch (command) {
      case 'import':
        return await importCommand(rest, values, env, options);
      case 'token':
        return await tokenCommand(rest, values.json === true, env, options);
      case 'get':
        return await getCommand(rest, () => clientFor(credentialsFromEnv(env), options), usageOf('get'));
      case 'listen':
        return await listenCommand(rest, values, env, options);
      case 'trigger':
        return await triggerCommand(rest, () => clientFor(credentialsFromEnv(env), options), usageOf('trigger'));
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof ProgressLogMismatch || error instanceof CredentialsError) {
      // A message that names its command (`svc listen: …`) is not prefixed again.
      process.stderr.write(/^svc[ :]/.test(error.message) ? `${error.message}\n` : `svc: ${error.message}\n`);
      return EXIT.usage;
    }
    if ((error as { code?: string }).code === 'ENOENT') {
      process.stderr.write(`svc: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`svc: ${(error as Error).message}\n${USAGE}\n`);
      return EXIT.usage;
    }
    // A request the service refused (a 4xx other than 408 and 429, the temporary ones the client retries), e.g.
    // svc listen's unknown --events or a token without webhooks:write: the same command cannot succeed when
    // run again, so this is the usage exit, not "interrupted" (3, which says to re-run).
    if (error instanceof ApiError && error.status >= 400 && error.status < 500 && ![408, 429].includes(error.status)) {
      writeRefusal(error);
      return EXIT.usage;
    }
    // Nothing answered (the address names no running service, or the connection broke): say where to look.
    if (error instanceof NetworkError) {
      process.stderr.write(
        `svc: ${error.message}: is the service running at that address? (it is SVC_BASE_URL, or baseUrl of ` +
          'SVC_CREDENTIALS_FILE)\n',
      );
      return EXIT.interrupted;
    }
    if (error instanceof SiteServicesError) {
      process.stderr.write(`svc: ${error.message}\n`);
      return EXIT.interrupted;
    }
    throw error;
  }
}
