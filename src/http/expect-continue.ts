/**
 * `Expect: 100-continue` is answered when the body is about to be read, not on arrival. Node writes
 * `100 Continue` to every request that asks, before anything of ours runs: a client without credentials, past
 * its rate limit, or declaring a body longer than the route accepts was invited to send all of it (curl asks
 * before every upload over 1 MiB) and only then told 401, 429 or 413. RFC 9110 §10.1.1 lets a server send the
 * final status instead when it can already tell.
 *
 * With a `checkContinue` listener Node writes nothing itself: the request goes through Fastify as any other,
 * its hooks (rate limit, header checks, authentication, scope, the route's body limit) first, and the 100 is
 * written on the first read of the body: the JSON parser's, or an upload's. A request refused before that is
 * answered with its final status alone, and Node closes the connection after it (a response to an expectation
 * it did not meet never keeps the connection: the client may or may not send the body next).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** The body's own `_read` of a request whose 100 waits for its first read. */
const pendingContinue = new WeakMap<IncomingMessage, IncomingMessage['_read']>();

/** Makes the request's first read of its body write `100 Continue`, unless the answer has already begun. */
function continueOnFirstRead(request: IncomingMessage, response: ServerResponse): void {
  // Readable calls `_read` when a consumer first wants data (a 'data' listener, pipe, resume, read), and
  // again only once what it was given is used up: the first call is the moment the body is wanted.
  const read = request._read;
  pendingContinue.set(request, read);
  request._read = function firstRead(size: number) {
    withdrawContinue(request);
    // Node drains an unread body once the answer is written (a refusal's): that read invites nothing.
    if (!response.headersSent) response.writeContinue();
    read.call(this, size);
  };
}

/**
 * Reading a refused request's body to drop it (lingering-close.ts) is no invitation: its 100 is never written.
 * The refusal is thrown after that read starts, and the read's first call may come before the answer's headers.
 */
export function withdrawContinue(request: IncomingMessage): void {
  const read = pendingContinue.get(request);
  if (read === undefined) return;
  pendingContinue.delete(request);
  request._read = read;
}

/** Has the server's `Expect: 100-continue` requests go through Fastify with the 100 deferred. */
export function deferContinue(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    continueOnFirstRead(request, response);
    // What Node does without a listener, less the 100: Fastify's handler is the server's 'request' listener.
    server.emit('request', request, response);
  });
}
