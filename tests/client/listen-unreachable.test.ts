/**
 * `svc listen` (the command, as a process of its own) started while the service cannot be reached: every
 * connection is reset. It keeps trying to open its listener, and Ctrl-C ends it at once with exit 0 and nothing
 * to close: the token request under way is abandoned with its retries, and no timer or request is left to
 * hold the process (it ends by itself: the bin sets the exit code and never calls process.exit).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runSvc } from '../helpers/client.js';

let server: net.Server;
let port: number;
let connections = 0;
let connected: () => void = () => undefined;
const firstConnection = new Promise<void>((resolve) => {
  connected = resolve;
});
const stateHome = fs.mkdtempSync(path.join(os.tmpdir(), 'listen-unreachable-'));

beforeAll(async () => {
  server = net.createServer((socket) => {
    connections++;
    connected();
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  fs.rmSync(stateHome, { recursive: true, force: true });
});

it('Ctrl-C while the service cannot be reached ends svc listen at once: exit 0, nothing to close', async () => {
  const run = runSvc(['listen', '--forward-to', 'http://127.0.0.1:9/webhooks'], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    XDG_STATE_HOME: stateHome,
    SVC_BASE_URL: `http://127.0.0.1:${port}`,
    SVC_CLIENT_ID: 'cli_unreachable',
    SVC_CLIENT_SECRET: 'secret-unreachable',
  });
  // Its token request has been sent (and reset): the client retries it, with backoff, for seconds.
  await firstConnection;
  const interrupted = Date.now();
  run.child.kill('SIGINT');

  const { code, stderr } = await run.done;
  // Before, the open went on through the token request's retries and ended the command with exit 3.
  expect(code, stderr).toBe(0);
  expect(stderr.trim().split('\n').at(-1)).toBe('svc listen: stopped before a listener was opened; nothing to close');
  // Generous (a loaded machine), and still well short of the retry schedule the service's absence sets off.
  expect(Date.now() - interrupted).toBeLessThan(60_000);
  expect(connections).toBeGreaterThanOrEqual(1);
});
