/**
 * A production start says what it serves besides the API: where METRICS_PORT answers, and that the operator
 * API is off when ADMIN_TOKEN is unset. Off answers 404 to /console, /admin/v1 and /metrics (it does not say
 * it exists), and the log said nothing, so an operator who forgot the token had no way to learn why.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { BUILD_LIMIT_MS, ensureBuilt, ROOT, SERVER_ENTRY } from '../helpers/compiled-server.js';
import { productionKeys } from '../helpers/production-keys.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];

beforeAll(ensureBuilt, BUILD_LIMIT_MS);
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A production start on an embedded database of its own, until it serves (`whileServing` then asks it what the
 * test needs; by default whether /console exists); then stopped. Its output.
 */
async function productionStart(
  extra: NodeJS.ProcessEnv,
  whileServing: (ports: { port: number; metrics: number }) => Promise<void> = async ({ port }) => {
    const admin = await fetch(`http://127.0.0.1:${port}/console`);
    expect(admin.status).toBe(extra.ADMIN_TOKEN ? 200 : 404);
  },
): Promise<{ output: string; port: number; metrics: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'operator-surfaces-'));
  dirs.push(dataDir);
  const [port, metrics] = [await freePort(), await freePort()];
  const { PATH, HOME } = process.env;
  const env = { PATH, HOME, DATA_DIR: dataDir, HOST: '127.0.0.1', ENVIRONMENT: 'production', ...productionKeys() };
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), METRICS_PORT: String(metrics), ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = extra.ROLE === 'worker' ? '"msg":"delivery worker started"' : '"msg":"service started"';
  while (!output.includes(started)) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await whileServing({ port, metrics });
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  return { output, port, metrics };
}

function entries(output: string): Array<{ level: number; msg: string; startup?: boolean }> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

describe('a production start', () => {
  it('without ADMIN_TOKEN warns that the operator API is off, and says where METRICS_PORT answers', async () => {
    const { output, metrics } = await productionStart({});
    const lines = entries(output);
    const off = lines.find((line) => line.msg.startsWith('the operator API is off'));
    expect(off, output).toMatchObject({ level: 40, startup: true });
    expect(off!.msg).toContain('ADMIN_TOKEN is unset');
    expect(off!.msg).toContain('/console');
    expect(lines.map((line) => line.msg)).toContain(
      `metrics on http://127.0.0.1:${metrics}/metrics (no token: keep METRICS_PORT off the public network)`,
    );
  }, 120_000);

  it('with ADMIN_TOKEN says nothing of it', async () => {
    const { output } = await productionStart({ ADMIN_TOKEN: 'operator-token-for-this-test-0001' });
    expect(output).not.toContain('operator API is off');
  }, 120_000);

  it('of ROLE=worker answers /health and /ready on METRICS_PORT, its only listener, and says so', async () => {
    const { output, metrics } = await productionStart({ ROLE: 'worker' }, async ({ port, metrics }) => {
      const health = await fetch(`http://127.0.0.1:${metrics}/health`);
      expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
      const ready = await fetch(`http://127.0.0.1:${metrics}/ready`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
      expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status).toBe(200);
      // PORT is not listened on by a worker.
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    });
    const address = `http://127.0.0.1:${metrics}`;
    expect(entries(output).map((line) => line.msg)).toContain(
      `metrics on ${address}/metrics, /health and /ready on ${address} (no token: keep METRICS_PORT off the public network)`,
    );
  }, 120_000);
});
