/**
 * SIGTERM sent to `npm start` (what a process manager, `docker stop` with npm as PID 1, or `kill` of the pid
 * a shell shows for it does) stops the service gracefully. npm forwards the signal to the shell running the
 * script; a shell that forks node for it died of the signal and left the service running, orphaned, with
 * the port taken and no "shutting down" line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { BUILD_LIMIT_MS, ensureBuilt, ROOT } from '../helpers/compiled-server.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-signal-'));
let npm: ChildProcess | undefined;
let servicePid: number | undefined;

beforeAll(ensureBuilt, BUILD_LIMIT_MS);

afterAll(() => {
  if (npm && npm.exitCode === null) npm.kill('SIGKILL');
  if (servicePid !== undefined && alive(servicePid)) process.kill(servicePid, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean | Promise<boolean>, limitMs = 240_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe('npm start', () => {
  it('SIGTERM to npm stops the service gracefully, not just npm and its shell', { timeout: 300_000 }, async () => {
    const port = await freePort();
    // A sandbox start on an embedded database of its own: the service's pid is in its log lines.
    const { PATH, HOME } = process.env;
    const env = { PATH, HOME, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    npm = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npm.stdout!.on('data', (chunk) => (output += chunk));
    npm.stderr!.on('data', (chunk) => (output += chunk));
    const npmExited = new Promise<void>((resolve) => npm!.on('exit', () => resolve()));

    const listening = await until(async () => {
      if (npm!.exitCode !== null) throw new Error(`npm start exited with ${npm!.exitCode}:\n${output}`);
      const ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
        (response) => response.ok,
        () => false,
      );
      return ready && output.includes('site-services: listening on ');
    });
    expect(listening, output).toBe(true);
    servicePid = Number(/"pid":(\d+)/.exec(output)?.[1]);
    expect(servicePid, output).toBeGreaterThan(0);

    npm.kill('SIGTERM');
    await npmExited;
    // The service itself got the signal: it says so and its process ends (the port is free again).
    expect(await until(() => !alive(servicePid!), 30_000), output).toBe(true);
    expect(output).toContain('"msg":"shutting down"');
  });
});
