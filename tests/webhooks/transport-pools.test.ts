/**
 * The pinned transport keeps at most `maxPools` connection pools (one per origin and checked address): a host
 * name that resolves to a new address at every lookup would otherwise keep a pool and its open connections for
 * each. Past the cap the least recently used pool is closed, and its connection with it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { PinnedTransport } from '../../src/modules/outbox/transport.js';

interface Receiver {
  url: URL;
  /** Connections this receiver has seen close. */
  closed: () => number;
  server: http.Server;
}

async function receiver(): Promise<Receiver> {
  let closed = 0;
  const server = http.createServer((_, response) => response.end('ok'));
  server.on('connection', (socket) => socket.on('close', () => closed++));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/hook`), closed: () => closed, server };
}

const receivers: Receiver[] = [];
const transport = new PinnedTransport({ connectTimeoutMs: 5_000, connections: 1, maxPools: 2 });
afterAll(async () => {
  await transport.close();
  for (const each of receivers) each.server.closeAllConnections();
  await Promise.all(receivers.map((each) => new Promise((resolve) => each.server.close(resolve))));
});

function send(to: Receiver) {
  return transport.send({
    url: to.url,
    hostname: '127.0.0.1',
    addresses: ['127.0.0.1'],
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{}'),
    signal: AbortSignal.timeout(10_000),
  });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

it('closes the least recently used pool past the cap, and opens it again when it is needed', async () => {
  const [a, b, c] = [await receiver(), await receiver(), await receiver()];
  receivers.push(a, b, c);
  expect((await send(a)).statusCode).toBe(200);
  expect((await send(b)).statusCode).toBe(200);
  expect((await send(a)).statusCode).toBe(200); // a is now the more recently used of the two
  expect((await send(c)).statusCode).toBe(200); // a third pool: b's is closed, not a's
  await until(() => b.closed() === 1);
  expect(a.closed()).toBe(0);
  expect((await send(b)).statusCode).toBe(200); // b again: a new pool, and a's closed (least recently used)
  await until(() => a.closed() === 1);
  expect(c.closed()).toBe(0);
});
