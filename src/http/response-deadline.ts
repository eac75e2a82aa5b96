/**
 * A response must be read within RESPONSE_TIMEOUT_MS of being ready, or its connection is closed. Node bounds
 * how long a request may take to arrive (REQUEST_TIMEOUT_MS) but nothing bounds how long a client may take to
 * read the answer: a client that asks for a 10 MiB download and never reads held its socket and more than a
 * MiB of buffered chunks forever (hostile-tenant probe), a hundred of them a minute within the rate limit.
 * An idle timeout would not do: a client reading a few bytes a minute is never idle.
 */
import type { FastifyInstance } from 'fastify';

/**
 * An answer this small is taken whole by the sockets' buffers (ours to send and the client's to receive) even
 * if the client never reads: it holds no memory of the process, and the idle keep-alive connection is closed
 * by its own timeout. Most answers are this small, and need no timer.
 */
const BUFFERED_WHOLE_BYTES = 16 * 1024;

/** A string's length counts UTF-16 units: its bytes are at most three times that, still what the buffers take. */
function takenWhole(payload: unknown): boolean {
  if (payload === null || payload === undefined) return true;
  return (typeof payload === 'string' || Buffer.isBuffer(payload)) && payload.length <= BUFFERED_WHOLE_BYTES;
}

export function registerResponseDeadline(app: FastifyInstance, timeoutMs: number): void {
  // Callback style, like the other hooks every request passes: no promise per response. A WebSocket stream
  // is hijacked before any onSend, so it is not bounded here.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (takenWhole(payload)) return done(null, payload);
    const response = reply.raw;
    const timer = setTimeout(() => {
      request.log.info({ timeoutMs }, 'response not read in time: connection closed');
      response.destroy();
    }, timeoutMs);
    timer.unref();
    // 'close' follows both the last byte handed to the system and a connection lost early.
    response.once('close', () => clearTimeout(timer));
    done(null, payload);
  });
}
