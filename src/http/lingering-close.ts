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
import { withdrawContinue } from './expect-continue.js';

/** The longest a connection lingers after its answer: ample for a client to read the answer and stop. */
export const LINGER_MS = 5_000;

/**
 * Reads and discards the rest of a request body. Beyond `budget` bytes the connection is closed instead:
 * a client streaming without end gets no answer rather than unbounded work. A connection that closes after
 * the answer closes only when this reading ends, at most LINGER_MS after the answer.
 */
export function discardRestOfBody(raw: IncomingMessage, budget: number): Promise<void> {
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
  lingerBeforeClosing(raw.socket, read);
  return read;
}

/**
 * Node ends a connection after its last answer with `socket.destroySoon()`: the end of our side, and the
 * socket destroyed as soon as the answer is written. This connection's one instead waits for `read` too,
 * and LINGER_MS at most. Only this socket's, and only once: a later answer on a kept-alive connection finds
 * `read` long settled, which is Node's own close again.
 */
function lingerBeforeClosing(socket: Socket | null, read: Promise<void>): void {
  if (socket === null || socket.destroyed) return;
  socket.destroySoon = () => {
    Reflect.deleteProperty(socket, 'destroySoon');
    if (socket.writable) socket.end();
    const deadline = setTimeout(() => socket.destroy(), LINGER_MS);
    let written = socket.writableFinished;
    let bodyRead = false;
    const close = () => {
      if (!written || !bodyRead) return;
      clearTimeout(deadline);
      socket.destroy();
    };
    socket.once('close', () => clearTimeout(deadline));
    if (!written)
      socket.once('finish', () => {
        written = true;
        close();
      });
    void read.then(() => {
      bodyRead = true;
      close();
    });
  };
}
