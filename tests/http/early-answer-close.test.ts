/**
 * A request answered before its body arrived (a 401 or 429 from an onRequest hook, `Connection: keep-alive`)
 * leaves its connection reading: Node reads and drops the rest of the body so that the connection can serve
 * the next request. Measured here: a client that keeps sending after such an answer held the app's close for
 * as long as it sent, since Node stops applying the request timeout once its server closes (the server read
 * on, 256 KiB after the close began and more, and the close ended only with the client). The app's close now
 * ends these connections once their answer is written (lingering-close.ts), as it ends a lingering upload's.
 * No clock: the client sends until the server ends its connection, or, failing, until the server has read a
 * bound of bytes since the close began; what happened first is the verdict.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

/** How much the server may read after the close began before the test calls the close held. */
const HELD_AFTER = 4 * 1024 * 1024;

interface Trickle {
  /** The answer's header block, once whole (its body too). */
  answered: Promise<string>;
  /** Resolves when the server ends the connection. */
  ended: Promise<void>;
  stop(): void;
}

/** A body of 100 MB that keeps coming, 4 KiB a write, after the answer too, until stopped or ended. */
function trickle(t: TestApp, chunked: boolean): Trickle {
  const url = new URL(t.baseUrl);
  const socket = connect({ port: Number(url.port), host: url.hostname });
  let received = Buffer.alloc(0);
  let stopped = false;
  const piece = Buffer.alloc(4096, 'a');
  const framed = chunked ? Buffer.concat([Buffer.from('1000\r\n'), piece, Buffer.from('\r\n')]) : piece;
  const answered = new Promise<string>((resolve) =>
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/^content-length: *(\d+)/im.exec(text.slice(0, end))?.[1]);
      if (end >= 0 && received.length - end - 4 >= length) resolve(text.slice(0, end));
    }),
  );
  const ended = new Promise<void>((resolve) => {
    socket.once('end', resolve);
    socket.once('close', resolve);
  });
  socket.on('error', () => undefined);
  const pump = () => {
    if (stopped || socket.destroyed || !socket.writable) return;
    // The next write once this one has left: the pace of the client's own writes, never a fixed sleep.
    socket.write(framed, () => setImmediate(pump));
  };
  const length = chunked ? 'Transfer-Encoding: chunked' : 'Content-Length: 100000000';
  socket.write(
    `POST /api/v1/sites HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${length}\r\n\r\n`,
  );
  pump();
  return {
    answered,
    ended,
    stop() {
      stopped = true;
      socket.destroy();
    },
  };
}

describe.each([
  ['401 (no credentials)', 401, false],
  ['401 (no credentials), chunked', 401, true],
  ['429 (past the rate limit)', 429, false],
] as const)('a kept-alive connection answered %s while its body keeps coming', (_name, status, chunked) => {
  it("is ended by the app's close, which does not wait for the client to stop", async () => {
    const t = await startTestApp({ config: { rateLimitPerMinute: 1 } });
    try {
      if (status === 429) expect((await t.http.get('/api/v1/sites')).status).toBe(401);
      let server!: Socket;
      t.app.server.once('connection', (socket: Socket) => (server = socket));
      const client = trickle(t, chunked);
      const head = await client.answered;
      expect(head.split(' ')[1]).toBe(String(status));
      expect(head).toMatch(/^connection: keep-alive/im);

      const events: string[] = [];
      const readAtClose = server.bytesRead;
      const closed = t.app.close().then(() => events.push('app closed'));
      void client.ended.then(() => events.push('connection ended by the server'));
      // The server reading on after the close began: Node drops the body, and the connection is not idle.
      const held = (async () => {
        while (events.length === 0 && server.bytesRead - readAtClose < HELD_AFTER)
          await new Promise((resolve) => setImmediate(resolve));
        if (events.length === 0) events.push(`the server read ${HELD_AFTER} bytes after the close began`);
        client.stop();
      })();
      await Promise.all([closed, held]);
      expect(events[0]).toMatch(/^(app closed|connection ended by the server)$/);
      expect(events).toContain('app closed');
    } finally {
      await t.close();
    }
  });
});
