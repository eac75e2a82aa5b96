/**
 * README sections run as written (tests/readme/): their sh blocks, read from the README itself, typed into one
 * bash session beside a copy of the checkout, `site-services/` (where `git clone` would make it: every tracked
 * top-level entry and node_modules/ linked, dist/ even before it is built; no data/ and nothing a reader's commands
 * write), through real
 * processes (`npm start`, `npx svc`, the example receiver, curl). Ports 3000 (the service) and 8080 (a receiver)
 * are replaced by free ones; on PostgreSQL the service gets an empty database of its own. Every process the
 * shell starts is in its process group, killed when the shell is closed.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from './app.js';
import { ROOT, until } from './real-processes.js';

/** Not linked into the copy: what a first start or a reader's commands write in the checkout. */
const LEFT_OUT = ['data', '.git', 'listen.log', 'receiver-data'];

/**
 * The checkout's top-level entries a clone has (tracked ones) and `npm install` adds, so that what a reader's own
 * run of these blocks left in the checkout (`sites.csv.progress.jsonl`, `return-label.pdf`, …) is not in the copy:
 * an import's progress log there made the copy's import answer "created 0 now". Every entry but LEFT_OUT outside git.
 */
function checkoutEntries(): string[] {
  let tracked: string[];
  try {
    tracked = execFileSync('git', ['ls-files', '-z'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\0')
      .filter(Boolean)
      .map((file) => file.split('/')[0]!);
  } catch {
    tracked = fs.readdirSync(ROOT);
  }
  return [...new Set([...tracked, 'node_modules', 'dist'])].filter((entry) => !LEFT_OUT.includes(entry));
}

/** The sh block that follows `marker` in the README. */
export function readmeBlock(marker: string): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(marker);
  if (start < 0) throw new Error(`README: ${marker} is missing`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!block) throw new Error(`README: no sh block after ${marker}`);
  return block[1]!;
}

/**
 * The js block right after `marker` (an HTML comment such as `<!-- example: webhook receiver`) under `heading` in
 * the client package's README.
 */
export function clientReadmeExample(heading: string, marker: string): string {
  const readme = fs.readFileSync(path.join(ROOT, 'packages', 'client', 'README.md'), 'utf8');
  const section = readme.indexOf(heading);
  const start = readme.indexOf(marker, section);
  if (section < 0 || start < 0) throw new Error(`client README: no ${marker} under "${heading}"`);
  const block = /-->\n```js\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!block || block.index > 120) throw new Error('client README: no js block right after the marker');
  return block[1]!;
}

/** The client package's build, made again when a source is newer (npm install builds it; a checkout may be behind). */
function buildClientIfStale(): void {
  const client = path.join(ROOT, 'packages', 'client');
  const built = path.join(client, 'dist', 'cli', 'bin.js');
  const newest = (dir: string): number =>
    Math.max(
      ...fs.readdirSync(dir, { withFileTypes: true }).map((entry) => {
        const file = path.join(dir, entry.name);
        return entry.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs;
      }),
    );
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= newest(path.join(client, 'src'))) return;
  execFileSync('npm', ['run', 'build'], { cwd: client, stdio: 'ignore' });
}

export interface ReadmeShell {
  apiPort: number;
  receiverPort: number;
  /** What the shell and its processes wrote, stdout and stderr interleaved. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Types `text` (one command) with the ports replaced, and waits until the shell has run it. */
  run(text: string, timeoutMs?: number): Promise<void>;
  /**
   * Runs a whole block as pasted into the shell (its variables stay set), with the ports replaced: sourced from
   * a file, stdin /dev/null, so that no command can read the lines after it as its input.
   */
  runBlock(text: string, timeoutMs?: number): Promise<void>;
  /** Waits for `condition`; on a timeout the error shows what the shell wrote by then. */
  until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
  /** A file of the copy ('' when absent). */
  read(file: string): string;
  exists(file: string): boolean;
  /** Waits for the sandbox's first start, after `npm start`: the credential packet written and /ready answering. */
  sandboxStarted(): Promise<void>;
  close(): Promise<void>;
}

export async function openReadmeShell(name: string): Promise<ReadmeShell> {
  buildClientIfStale();
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const clone = path.join(directory, 'site-services');
  fs.mkdirSync(clone);
  // dist/ too when it is not built yet: the first `npm start` builds it in the checkout.
  for (const entry of checkoutEntries()) fs.symlinkSync(path.join(ROOT, entry), path.join(clone, entry));
  const databaseUrl = inject('databaseUrl');
  const empty = databaseUrl ? await openEmptyDatabase(`ss_${name.replaceAll('-', '_')}`) : undefined;
  const [apiPort, receiverPort] = [await freePort(), await freePort()];
  const shell: ChildProcess = spawn('bash', ['--norc', '--noprofile'], {
    cwd: directory,
    detached: true,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // svc listen remembers its listener here, not in the home directory of whoever runs the tests.
      XDG_STATE_HOME: path.join(directory, 'state'),
      PORT: String(apiPort),
      ...(empty?.url ? { DATABASE_URL: empty.url } : {}),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let all = '';
  let out = '';
  let err = '';
  shell.stdout!.on('data', (chunk) => {
    all += chunk;
    out += chunk;
  });
  shell.stderr!.on('data', (chunk) => {
    all += chunk;
    err += chunk;
  });
  let commands = 0;
  const file = (name: string) => path.join(clone, name);
  const withPorts = (text: string) => text.replaceAll('3000', String(apiPort)).replaceAll('8080', String(receiverPort));
  const waitFor = async (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) => {
    try {
      await until(condition, what, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}; the shell wrote:\n${all}`);
    }
  };
  const run = async (typed: string, what: string, timeoutMs: number) => {
    commands += 1;
    const marker = `__readme_command_${commands}_done__`;
    shell.stdin!.write(`${typed}\necho ${marker}\n`);
    await waitFor(() => out.includes(marker), what, timeoutMs);
  };
  return {
    apiPort,
    receiverPort,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    run: (text, timeoutMs = 120_000) => run(withPorts(text), text, timeoutMs),
    async runBlock(text, timeoutMs = 180_000) {
      const script = path.join(directory, `block-${commands + 1}.sh`);
      fs.writeFileSync(script, withPorts(text));
      await run(`source ${script} < /dev/null`, text, timeoutMs);
    },
    until: waitFor,
    read: (name) => (fs.existsSync(file(name)) ? fs.readFileSync(file(name), 'utf8') : ''),
    exists: (name) => fs.existsSync(file(name)),
    sandboxStarted: () =>
      waitFor(
        async () =>
          fs.existsSync(file('data/credentials.json')) &&
          (await fetch(`http://127.0.0.1:${apiPort}/ready`).catch(() => undefined))?.ok === true,
        "the sandbox's first start",
        240_000,
      ),
    async close() {
      if (shell.pid) {
        try {
          process.kill(-shell.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await empty?.drop();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
