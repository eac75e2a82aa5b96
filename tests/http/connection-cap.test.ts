/**
 * One client address holds at most CONNECTIONS_PER_ADDRESS open connections: past it a new one is closed at
 * once, without a request read; a connection closed frees its place; a trusted proxy's are not capped.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

const CAP = 3;
let t: TestApp;
let proxied: TestApp;
const opened: net.Socket[] = [];

beforeAll(async () => {
  t = await startTestApp({ config: { connectionsPerAddress: CAP } });
  proxied = await startTestApp({
    config: { connectionsPerAddress: CAP, trustProxy: ['127.0.0.1'] },
    database: t.database,
    keys: t.keys,
  });
});
afterAll(async () => {
  for (const socket of opened) socket.destroy();
  await proxied?.close();
  await t?.close();
});

/** A connection to the app, once connected. */
async function connect(app: TestApp): Promise<net.Socket> {
  const { port } = new URL(app.baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  opened.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

/** The answer's status line to a GET /health sent on the socket, or `closed` when the server closes it first. */
function healthOn(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n')) resolve(received.slice(0, received.indexOf('\r\n')));
    });
    socket.once('close', () => resolve('closed'));
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  });
}

describe('connections per client address', () => {
  it(`keeps ${CAP} open connections of one address and closes the next at once; a closed one frees its place`, async () => {
    const held = [];
    for (let index = 0; index < CAP; index++) held.push(await connect(t));
    for (const socket of held) expect(await healthOn(socket)).toBe('HTTP/1.1 200 OK');

    expect(await healthOn(await connect(t))).toBe('closed');

    held[0]!.destroy();
    // The server learns of the close a moment later: until then a new connection may still be refused.
    let status = 'closed';
    while (status === 'closed') status = await healthOn(await connect(t));
    expect(status).toBe('HTTP/1.1 200 OK');
  });

  it("does not cap a trusted proxy's connections (its clients share its address)", async () => {
    const held = [];
    for (let index = 0; index < CAP + 2; index++) held.push(await connect(proxied));
    for (const socket of held) expect(await healthOn(socket)).toBe('HTTP/1.1 200 OK');
  });
});
