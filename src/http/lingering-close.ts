/**
 * A request body the service answers before reading it all (an upload refused as too large) is read and
 * dropped after the answer rather than left unread. Unread bytes are what resets a connection: Node closes
 * a connection after an answer with `Connection: close` (the client's or ours) as soon as the answer is
 * written, and the kernel answers bytes that arrive on, or wait in, a closed socket with RST. A client still
 * sending then met the reset before it read the 413 (its write failed with EPIPE, and it gave up without
 * the answer: every time for a client writing as a pipe does, in tests/files/upload-close.errors.test.ts).
 *
 * So the close lingers, as nginx's `lingering_close` does: the answer goes out with our end of the
 * connection shut (the client reads the answer, then the end), and the socket is closed only once the
 * body has been read to its end or the client has closed, bounded in bytes and in time so that a client
 * that never stops sending gets no more than that.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { withdrawContinue } from './expect-continue.js';

/** The longest a connection lingers after its answer: ample for a client to read the answer and stop. */
export const LINGER_MS = 5_000;

/** An app's lingering connections. */
interface Lingering {
  readonly lingerMs: number;
  /** Set once the app closes: a connection answered from then on closes as Node closes it, at once. */
  closing: boolean;
  /** What ends each connection lingering now. */
  readonly ends: Set<() => void>;
}

/** Keyed by the app's HTTP server, which every request of the app (whatever its plugin context) reaches. */
const lingeringOf = new WeakMap<object, Lingering>();

/**
 * A lingering connection has had its answer; what it waits for is only the client's end of a body that is
 * dropped. So the app's close does not wait for it: Fastify's close waits for every connection that is not
 * idle, and to Node one whose request body is still arriving is not (its LINGER_MS held a SIGTERM up to 5 s).
 * On close each one is closed once its answer is written, as Node closes a connection without lingering;
 * connections whose requests are still being served drain as before. `lingerMs` is for tests.
 *
 * So is a kept-alive connection answered before its body arrived (a 401 or 429 from an onRequest hook): Node
 * reads and drops the rest of the body on it (IncomingMessage's _dump), and once the close starts it no longer
 * applies the request timeout, so a client that kept sending held the close for as long as it sent
 * (tests/http/early-answer-close.test.ts).
 */
export function registerLingeringClose(app: FastifyInstance, lingerMs = LINGER_MS): void {
  const lingering: Lingering = { lingerMs, closing: false, ends: new Set() };
  lingeringOf.set(app.server, lingering);
  // Callback style, like the other hooks every request passes: no promise per request.
  app.addHook('onResponse', (request, _reply, done) => {
    if (!request.raw.complete) endOnClose(request.raw, lingering);
    done();
  });
  // preClose: before Fastify closes the idle connections and waits for the others.
  app.addHook('preClose', async () => {
    lingering.closing = true;
    for (const end of lingering.ends) end();
  });
}

/**
 * The connection of a request answered while its body is still arriving ends when the app closes (at once if it
 * is closing), once the answer is written; unless the body has arrived (the connection is idle again, and Node's
 * close ends it) or the connection closed first. A lingering one (discardRestOfBody) closes the same way.
 */
function endOnClose(raw: IncomingMessage, lingering: Lingering): void {
  const socket = raw.socket;
  if (socket === null || socket.destroyed) return;
  const end = () => {
    forget();
    // Node's own end of a connection after its last answer (socket.destroySoon): ours shut, destroyed once written.
    if (socket.writable) socket.end();
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  const forget = () => {
    lingering.ends.delete(end);
    raw.off('end', forget);
    socket.off('close', forget);
  };
  if (lingering.closing) return void end();
  lingering.ends.add(end);
  raw.once('end', forget);
  socket.once('close', forget);
}

/**
 * Reads and discards the rest of a request body. Beyond `budget` bytes the connection is closed instead:
 * a client streaming without end gets no answer rather than unbounded work. A connection that closes after
 * the answer closes only when this reading ends, at most LINGER_MS after the answer.
 */
export function discardRestOfBody(request: FastifyRequest, budget: number): Promise<void> {
  const raw = request.raw;
  if (raw.complete || raw.destroyed || raw.readableEnded) return Promise.resolve();
  withdrawContinue(raw);
  raw.unpipe();
  const read = new Promise<void>((resolve) => {
    let seen = 0;
    const finish = () => {
      raw.off('data', count);
      raw.off('end', finish);
      raw.off('close', finish);
      raw.off('error', finish);
      resolve();
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > budget) {
        raw.destroy();
        finish();
      }
    };
    raw.on('data', count);
    raw.once('end', finish);
    raw.once('close', finish);
    raw.once('error', finish);
    raw.resume();
  });
  // An app that did not register (none that buildApp makes) lingers as before, its close not ending it.
  const lingering = lingeringOf.get(request.server.server) ?? { lingerMs: LINGER_MS, closing: false, ends: new Set() };
  lingerBeforeClosing(raw.socket, read, lingering);
  return read;
}

/**
 * Node ends a connection after its last answer with `socket.destroySoon()`: the end of our side, and the
 * socket destroyed as soon as the answer is written. This connection's one instead waits for `read` too,
 * and LINGER_MS at most. Only this socket's, and only once: a later answer on a kept-alive connection finds
 * `read` long settled, which is Node's own close again. Once the app closes, the body is not waited for.
 */
function lingerBeforeClosing(socket: Socket | null, read: Promise<void>, lingering: Lingering): void {
  if (socket === null || socket.destroyed) return;
  socket.destroySoon = () => {
    Reflect.deleteProperty(socket, 'destroySoon');
    if (socket.writable) socket.end();
    const deadline = setTimeout(() => socket.destroy(), lingering.lingerMs);
    let written = socket.writableFinished;
    let bodyRead = false;
    const close = () => {
      if (!written || !bodyRead) return;
      clearTimeout(deadline);
      socket.destroy();
    };
    const end = () => {
      bodyRead = true;
      close();
    };
    socket.once('close', () => {
      clearTimeout(deadline);
      lingering.ends.delete(end);
    });
    if (!written)
      socket.once('finish', () => {
        written = true;
        close();
      });
    void read.then(end);
    if (lingering.closing) end();
    else if (!socket.destroyed) lingering.ends.add(end);
  };
}
