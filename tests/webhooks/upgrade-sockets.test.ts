/**
 * In the sandbox an upgrade request is routed through Fastify on its raw socket (the listener streams'
 * WebSocket plugin). One that is not upgraded, answered by any route or refusal, must not leave its socket
 * open (hostile-tenant probe): it stayed open for ever, its client gone or not, and /health is not even
 * rate-limited, so anyone could hold as many sockets as the process could open.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const connections = () =>
  new Promise<number>((resolve, reject) =>
    t.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

/** An upgrade request the service answers without upgrading; the client ends its side on the answer. */
function upgradeRequest(path: string): Promise<string> {
  const { port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      ),
    );
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\r\n\r\n')) {
        socket.end();
        resolve(text.slice(0, text.indexOf('\r\n')));
      }
    });
    socket.on('error', reject);
  });
}

it('an upgrade request answered without upgrading leaves no socket open', async () => {
  const answers = [];
  for (const path of [
    '/health',
    '/api/v1/sites',
    '/api/v1/no-such-path',
    '/api/v1/sandbox/webhook-listeners/whl_x/stream',
  ])
    for (let index = 0; index < 5; index++) answers.push(await upgradeRequest(path));
  expect(new Set(answers)).toEqual(new Set(['HTTP/1.1 200 OK', 'HTTP/1.1 401 Unauthorized', 'HTTP/1.1 404 Not Found']));
  const until = Date.now() + 3_000;
  while ((await connections()) > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await connections()).toBe(0);
});
