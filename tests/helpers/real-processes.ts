/**
 * Real processes for end-to-end tests: the server (`src/server.ts` through tsx, as `npm start` runs it),
 * `svc` and the example receiver, each a child of its own whose output is kept and can be waited on.
 * Every process started here is killed by its pid when the test file ends (killAll).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface RealProcess {
  child: ChildProcess;
  /** Everything written so far, stdout and stderr interleaved. */
  output(): string;
  stdout(): string;
  /** Resolves with the first match of `pattern` in the output (waiting for it), or rejects when the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

const started = new Set<ChildProcess>();

/** `node <args>` in the repository, with only the given environment (and PATH, HOME). */
export function startNode(args: string[], env: Record<string, string>): RealProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let all = '';
  let out = '';
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', (chunk) => {
    all += chunk;
    out += chunk;
    changed();
  });
  child.stderr!.on('data', (chunk) => {
    all += chunk;
    changed();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      started.delete(child);
      changed();
      resolve(code);
    }),
  );
  return {
    child,
    output: () => all,
    stdout: () => out,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = all.match(pattern);
          if (match) return finish(() => resolve(match));
          if (child.exitCode !== null || child.signalCode !== null)
            return finish(() => reject(new Error(`exited before printing ${pattern}:\n${all}`)));
        };
        const timer = setTimeout(
          () => finish(() => reject(new Error(`${pattern} not printed within ${timeoutMs} ms:\n${all}`))),
          timeoutMs,
        );
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
  };
}

export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The server, started and ready (its /ready answers 200). */
export async function startServer(env: Record<string, string>, baseUrl: string): Promise<RealProcess> {
  const server = startNode(['--import', 'tsx', 'src/server.ts'], { HOST: '127.0.0.1', ...env });
  await until(
    async () => {
      if (server.child.exitCode !== null) throw new Error(`the server exited:\n${server.output()}`);
      return (await fetch(`${baseUrl}/ready`).catch(() => undefined))?.ok === true;
    },
    'the server did not become ready',
    240_000,
  );
  return server;
}

export function killAll(): void {
  for (const child of started) child.kill('SIGKILL');
  started.clear();
}
