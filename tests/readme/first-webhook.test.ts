/**
 * README "Receive your first webhook", run as written (issue 18): its commands, read from the README
 * itself, in one bash session in a copy of the checkout (every top-level entry linked, no data/), through
 * real processes: `npm start`, `npx svc listen`, the example receiver (which verifies every delivery with
 * verifyWebhook and the secret svc listen printed), curl creating a visit, `npx svc trigger`. Between
 * commands the test waits for what a reader waits for (the credential packet, the Ready line, the
 * receiver's start). Only `git clone` and `npm install` are not run: the checkout is the clone, and it is
 * installed. Ports 3000 and 8080 are replaced by free ones.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { ROOT, until } from '../helpers/real-processes.js';

const NOT_RUN = [/^git clone /, /^npm install\b/];

/** The README section's commands, continuation lines joined. */
function firstWebhookCommands(readme: string): string[] {
  const start = readme.indexOf('<!-- first-webhook:');
  if (start < 0) throw new Error('README: the first-webhook section is missing');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!block) throw new Error('README: the first-webhook section has no sh block');
  return block[1]!
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '');
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

const databaseUrl = inject('databaseUrl');
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'first-webhook-'));
const clone = path.join(directory, 'site-services');
let empty: Awaited<ReturnType<typeof openEmptyDatabase>> | undefined;
let shell: ChildProcess | undefined;
let output = '';

beforeAll(async () => {
  buildClientIfStale();
  fs.mkdirSync(clone);
  for (const entry of fs.readdirSync(ROOT)) {
    if (['data', '.git', 'listen.log', 'receiver-data'].includes(entry)) continue;
    fs.symlinkSync(path.join(ROOT, entry), path.join(clone, entry));
  }
  if (databaseUrl) empty = await openEmptyDatabase('ss_first_webhook');
}, 120_000);

afterAll(async () => {
  if (shell?.pid) {
    try {
      process.kill(-shell.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await empty?.drop();
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('README: Receive your first webhook', () => {
  it('takes a fresh checkout to events verified by the example receiver, in at most ten commands', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const commands = firstWebhookCommands(readme);
    expect(commands.length).toBeLessThanOrEqual(10);
    const [apiPort, receiverPort] = [await freePort(), await freePort()];

    shell = spawn('bash', ['--norc', '--noprofile'], {
      cwd: directory,
      detached: true,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(apiPort),
        ...(empty ? { DATABASE_URL: empty.url! } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    shell.stdout!.on('data', (chunk) => (output += chunk));
    shell.stderr!.on('data', (chunk) => (output += chunk));
    const run = async (command: string, index: number) => {
      const marker = `__command_${index}_done__`;
      shell!.stdin!.write(`${command}\necho ${marker}\n`);
      await until(() => output.includes(marker), `command ${index + 1} (${command})\n${output}`, 120_000);
    };
    const visible = (file: string) => fs.existsSync(path.join(clone, file));
    const read = (file: string) => (visible(file) ? fs.readFileSync(path.join(clone, file), 'utf8') : '');

    for (const [index, written] of commands.entries()) {
      if (NOT_RUN.some((pattern) => pattern.test(written))) continue;
      const command = written.replaceAll('3000', String(apiPort)).replaceAll('8080', String(receiverPort));
      await run(command, index);
      // What a reader waits for before the next command.
      if (/^npm start/.test(command)) {
        await until(
          async () =>
            visible('data/credentials.json') &&
            (await fetch(`http://127.0.0.1:${apiPort}/ready`).catch(() => undefined))?.ok === true,
          `the sandbox's first start\n${output}`,
          240_000,
        );
      } else if (/svc listen/.test(command)) {
        await until(() => /^Ready\./m.test(read('listen.log')), `svc listen's Ready line\n${output}`);
      } else if (/webhook-receiver/.test(command)) {
        await until(() => output.includes('receiving webhooks on port'), `the receiver's start\n${output}`);
      }
    }

    const ready = read('listen.log').split('\n')[0]!;
    expect(ready).toMatch(
      new RegExp(
        `^Ready\\. Forwarding events to http://localhost:${receiverPort}/webhooks\\. Signing secret: whsec_\\S+$`,
      ),
    );
    const triggered = [...output.matchAll(/^ {2}(\S+) (evt_\S+)$/gm)].map((match) => `${match[1]} ${match[2]}`);
    expect(triggered).toHaveLength(6);
    // The example receiver stores an event only once verifyWebhook accepted it.
    await until(
      () =>
        triggered.every((event) => output.includes(`stored ${event}`)) && /stored ticket\.created evt_/.test(output),
      `the receiver storing every event\n${output}`,
    );
    expect(output).not.toMatch(/refused delivery/);
    expect(read('listen.log')).toMatch(/ticket\.created {2}evt_\S+ {2}attempt 1 {2}200 {2}\d+ ms/);
  }, 420_000);
});
