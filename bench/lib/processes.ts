/**
 * Child processes of the benchmark: the service as `node dist/server.js`, and TypeScript helpers of the
 * bench itself (load generator, bare Fastify server, HTTPS receiver) run through tsx. Every process the
 * bench starts is registered here and stopped by its pid when the bench ends, whatever happened.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
const started = new Set<ChildProcess>();

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Service {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  /** Milliseconds from the spawn to the first ready answer (to within `pollMs`). */
  readyAfterMs: number;
  output(): string;
  stop(): Promise<void>;
}

function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.on('exit', () => started.delete(child));
  return child;
}

/** Waits until the process exits, sending SIGTERM first and SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops every process the bench started (on exit, also after a failure). */
export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((child) => stopProcess(child, 10_000)));
}

/**
 * Starts the service with `env` added to a minimal environment and waits until it is ready (the compiled
 * `dist/server.js`, or with `source: true` the TypeScript through tsx, which needs no build step):
 * `/ready` answers for an API process; a worker is ready once `workerReady(pid)` says so (its LISTEN
 * connection is open: at LOG_LEVEL=warn it prints nothing).
 */
export async function startService(
  env: Record<string, string>,
  options: {
    port?: number;
    name: string;
    nodeArgs?: string[];
    source?: boolean;
    workerReady?: (pid: number) => Promise<boolean>;
    /** How often readiness is asked (default 100 ms). */
    pollMs?: number;
  },
): Promise<Service> {
  const port = options.port ?? (await freePort());
  const fullEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...env,
  };
  const entry = options.source
    ? ['--import', 'tsx', path.join(ROOT, 'src', 'server.ts')]
    : [path.join(ROOT, 'dist', 'server.js')];
  const spawnedAt = performance.now();
  const child = track(
    spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
      cwd: ROOT,
      env: fullEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  child.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const worker = env.ROLE === 'worker';
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${options.name} exited with ${child.exitCode}:\n${output}`);
    if (worker) {
      if (!options.workerReady) throw new Error('a worker needs workerReady');
      if (await options.workerReady(child.pid!)) break;
    } else {
      try {
        if ((await fetch(`${baseUrl}/ready`)).ok) break;
      } catch {
        // not listening yet
      }
    }
    if (Date.now() > deadline) throw new Error(`${options.name} did not start within 60 s:\n${output}`);
    await sleep(options.pollMs ?? 100);
  }
  const readyAfterMs = performance.now() - spawnedAt;
  return { child, pid: child.pid!, baseUrl, readyAfterMs, output: () => output, stop: () => stopProcess(child) };
}

/** Forks a TypeScript module of the bench with an IPC channel (tsx loader). */
export function forkHelper(file: string, args: string[] = [], env: Record<string, string> = {}): ChildProcess {
  return track(
    fork(path.join(ROOT, 'bench', file), args, {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
}

/** Sends one request message to a forked helper and resolves with its answer (matched by id). */
let nextMessageId = 1;
export function ask<T>(child: ChildProcess, message: Record<string, unknown>, timeoutMs = 15 * 60_000): Promise<T> {
  const id = nextMessageId++;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`helper did not answer ${JSON.stringify(message.type)} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (answer: { id?: number; error?: string; result?: T }) => {
      if (answer.id !== id) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (answer.error) reject(new Error(answer.error));
      else resolve(answer.result as T);
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`helper exited (${code}) before answering ${JSON.stringify(message.type)}`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ ...message, id });
  });
}

/** The helper side of `ask`: answers each message with the handler's result or error. */
export function serveRequests(handler: (message: { type: string; [key: string]: unknown }) => Promise<unknown>): void {
  process.on('message', (message: { id: number; type: string }) => {
    handler(message).then(
      (result) => process.send!({ id: message.id, result }),
      (error: unknown) =>
        process.send!({
          id: message.id,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}

/** Runs a command to completion, resolving with its output; rejects on a non-zero exit. */
export function run(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(command, args, {
        cwd: options.cwd ?? ROOT,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`)),
    );
  });
}

/** Resident set size of a process in bytes (Linux /proc), or undefined when it is gone. */
export async function rssBytes(pid: number): Promise<number | undefined> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
