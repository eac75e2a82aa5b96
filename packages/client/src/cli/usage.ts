/**
 * What `svc` says of its own use: each command's usage, the options each takes, `svc --help`, `svc <command>
 * --help` and `svc --version`, and the usage errors that name an unknown command or option with the one most
 * likely meant.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from './credentials.js';
import { DEFAULT_RATE, MAX_RATE } from './import/pace.js';
import { closest } from './suggest.js';

/** Each command's lines of the usage, in the order `svc --help` lists them. */
const COMMAND_USAGE = {
  import: `  svc import <sites|site-visits|messages> <file.csv|file.jsonl> [--rate <per-minute>] [--progress <path>] [--report <path>]
             [--retry-rejected]
      one create per row, ${DEFAULT_RATE} a minute unless --rate (at most ${MAX_RATE}); rejected rows listed at the end. Run it
      again to resume, or after correcting the file in place (rows fixed, added, moved, removed): rows created before
      are not sent again, corrected ones are; a row changed after its resource was created is not sent: that
      resource is read back and reported with the fields to change with PATCH, or, once it matches the row, up to
      date (not read again). Unchanged rows refused for what they say (400, 413, 415, 422, 409 duplicate) are
      reported again, not sent, unless --retry-rejected`,
  token: `  svc token [--json]
      prints the bare access token, for "Authorization: Bearer $(svc token)"; --json: the whole token response`,
  get: `  svc get <path>
      GET /api/v1/<path> (or a url the service gave, such as a return label's) and print the answer; a file
      (a return label, an attachment) as its bytes: > file`,
  listen: `  svc listen --forward-to <url> [--events type,type] [--new-secret]
      sandbox: receive your webhooks on this machine; forwards each delivery to <url> (http or https), signed
      with the secret its Ready line prints, and prints a line per attempt (a failed one says when it is
      retried, or that it was the last). That secret is kept on this machine for the client id, whatever the
      service's address (in $XDG_STATE_HOME/svc or ~/.local/state/svc), so it stays the same on every run: Ctrl-C
      closes the listener and the next run opens a new one with the same secret. Killed any other way, the same
      command run again within 60 s resumes the listener; a sandbox restarted on another port (a new baseUrl in
      SVC_CREDENTIALS_FILE) is followed when it reconnects. --new-secret: make and keep a new secret (rotation).`,
  trigger: `  svc trigger <visit-id> <action> [name=value | name:=json ...]
      sandbox: run a simulator action on a visit (complete-lifecycle, assign-rep, schedule, dispatch, complete,
      transmit-deliverables). Each pair is a body member in the type the action declares: name=value is text,
      or true/false for a boolean member; name:=json sends a JSON value as written (name:=null for null).
        svc trigger <id> assign-rep fieldRepName='Jordan Lee'      fieldRepName:=null clears the rep
        svc trigger <id> schedule scheduledDate=2026-12-02 etaTime=09:30
        svc trigger <id> dispatch
        svc trigger <id> complete qualityReviewPassed=true         required: the service completes a visit
                                                                   only after its quality review passed
        svc trigger <id> transmit-deliverables notes='Meter replaced'`,
} as const;

type Command = keyof typeof COMMAND_USAGE;
export const COMMANDS = Object.keys(COMMAND_USAGE) as Command[];

/** The options each command takes (parseArgs knows them all; a command refuses the others'). */
export const COMMAND_OPTIONS: Record<Command, string[]> = {
  import: ['rate', 'progress', 'report', 'retry-rejected'],
  token: ['json'],
  get: [],
  listen: ['forward-to', 'events', 'new-secret'],
  trigger: [],
};

const CREDENTIALS_LINE =
  'credentials from the environment: SVC_BASE_URL, SVC_CLIENT_ID, SVC_CLIENT_SECRET, or SVC_CREDENTIALS_FILE';

export const USAGE = `usage:\n${COMMANDS.map((command) => COMMAND_USAGE[command]).join('\n')}
  svc <command> --help: that command alone; svc --version: this package's version
${CREDENTIALS_LINE}`;

/** One command's usage (`svc <command> --help`, and after a usage error of that command). */
export function usageOf(command: Command): string {
  return `usage:\n${COMMAND_USAGE[command]}\n${CREDENTIALS_LINE}`;
}

/** This package's version (`svc --version`): its package.json is two levels up from src/cli/ and dist/cli/ alike. */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export function isCommand(word: string | undefined): word is Command {
  return word !== undefined && (COMMANDS as string[]).includes(word);
}

/** The first word that is not an option: the command, whatever parseArgs makes of the rest. */
export function commandWord(argv: string[]): string | undefined {
  return argv.find((arg) => !arg.startsWith('-'));
}

/** An option parseArgs does not know: which one, what this command takes, and the command's usage. */
export function unknownOption(message: string, command: string | undefined): UsageError {
  const option = /Unknown option '([^']+)'/.exec(message)?.[1] ?? message;
  if (!isCommand(command)) return new UsageError(`unknown option ${option}\n${USAGE}`);
  const known = COMMAND_OPTIONS[command];
  const guess = closest(option.replace(/^-+/, ''), known);
  const takes = known.length ? `it takes ${known.map((name) => `--${name}`).join(', ')}` : 'it takes no options';
  return new UsageError(
    `svc ${command}: unknown option ${option}${guess ? ` (did you mean --${guess}?)` : ''}; ${takes}\n${usageOf(command)}`,
  );
}

/**
 * Commands other tools have, and what svc does instead. By spelling alone `svc list sites` was taken for
 * `svc listen` (the webhook listener), and `svc login` or `svc create` got no hint at all.
 */
const INSTEAD: Record<string, (target: string | undefined) => string> = {
  list: (target) => `to list, svc get ${target ?? 'sites'}`,
  ls: (target) => `to list, svc get ${target ?? 'sites'}`,
  show: (target) => `to read, svc get ${target ?? 'sites/<id>'}`,
  create: (target) => `to create, svc import ${target ?? 'sites'} <file.csv|file.jsonl> (one create per row)`,
  login: () => 'svc keeps no login: set SVC_CREDENTIALS_FILE (or the variables below); svc token tries them',
};
INSTEAD.post = INSTEAD.create!;
INSTEAD.auth = INSTEAD.login!;

/** A command svc does not have: which, and the one it most likely meant. */
export function unknownCommand(command: string, args: readonly string[] = []): UsageError {
  const instead = Object.hasOwn(INSTEAD, command.toLowerCase()) ? INSTEAD[command.toLowerCase()]!(args[0]) : undefined;
  const guess = instead ? undefined : closest(command, COMMANDS);
  const hint = instead ? ` (${instead})` : guess ? ` (did you mean svc ${guess}?)` : '';
  return new UsageError(`unknown command "${command}"${hint}\n${USAGE}`);
}
