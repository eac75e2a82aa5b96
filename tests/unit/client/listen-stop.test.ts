/**
 * `svc listen` stopped (Ctrl-C) while a stream is being set up, before its socket exists (its token being
 * fetched, e.g. renewed after an hour): the stop must still end the command and close the listener, not
 * leave a stream open that nothing closes. A fake client and a WebSocket server that accepts and says nothing.
 */
import fs from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { SiteServicesClient } from '../../../packages/client/src/client.js';
import { runListen } from '../../../packages/client/src/cli/listen/listen.js';

const server = createServer();
const sockets = new WebSocketServer({ server });
let baseUrl: string;
let tmpdir: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  // Where svc listen remembers its listener.
  tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'listen-stop-'));
});
afterAll(async () => {
  for (const socket of sockets.clients) socket.terminate();
  await new Promise((resolve) => sockets.close(resolve));
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(tmpdir, { recursive: true, force: true });
});

it('a stop while the stream token is fetched closes the listener and exits 0', async () => {
  const stop = new AbortController();
  const deleted: string[] = [];
  const listener = { id: 'whl_test', secret: 'whsec_test', streamPath: '/stream', graceSeconds: 60 };
  const client = {
    api: {
      POST: async () => ({ response: new Response(null, { status: 201 }), data: { data: listener } }),
      DELETE: async (_path: string, options: { params: { path: { id: string } } }) => {
        deleted.push(options.params.path.id);
        return { response: new Response(null, { status: 204 }) };
      },
    },
    // Ctrl-C arrives while the token is on its way.
    token: async () => {
      stop.abort();
      return 'token';
    },
  } as unknown as SiteServicesClient;
  const notes: string[] = [];
  const ran = runListen(
    { forwardTo: 'http://127.0.0.1:9/webhooks' },
    {
      client,
      baseUrl,
      clientId: 'cli_test',
      out: () => undefined,
      note: (line) => notes.push(line),
      stateDirectory: tmpdir,
    },
    stop.signal,
  );
  const outcome = await Promise.race([
    ran,
    new Promise((resolve) => setTimeout(() => resolve('still running'), 3_000)),
  ]);
  expect(outcome, notes.join('\n')).toBe(0);
  expect(deleted).toEqual(['whl_test']);
  expect(sockets.clients.size).toBe(0);
});
