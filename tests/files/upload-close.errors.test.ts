/**
 * An over-size upload from a client that sends `Connection: close` gets its 413 whole. Node closes such a
 * connection as soon as the answer is written; with the client's body still arriving, the kernel answered
 * those bytes with a reset, and a client still writing met the reset before it read the 413 (`EPIPE`,
 * `ECONNRESET`, no answer). The server now reads and drops the rest of the body after the answer, up to
 * the bound and for a few seconds at most, before it closes (a lingering close, src/http/lingering-close.ts).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../../src/http/lingering-close.js';
import { MAX_UPLOAD_REQUEST_BYTES } from '../../src/modules/files/limits.js';
import type { TestApp } from '../helpers/app.js';
import { BOUNDARY, MULTIPART_CONTENT_TYPE } from '../helpers/multipart.js';
import { createVisit, startVisitApp, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

/** What a client that does not stop would send: three times the bound. */
const SEND_AT_MOST = 3 * MAX_UPLOAD_REQUEST_BYTES;

interface Upload {
  /** Chunked, or a Content-Length of SEND_AT_MOST. */
  chunked: boolean;
  /**
   * How it writes: 64 KiB pieces until the socket's buffer is full, then at its drain, as a pipe does
   * (`burst`); one such piece per turn of the event loop (`yielding`); or 1 KiB once the one before is sent.
   */
  pace: 'burst' | 'yielding' | 'slow';
  /**
   * What the client does once it has the answer: stop sending and close (`close`, as curl does), go on
   * sending (`send-on`, a hostile client), or stop sending and keep its side of the connection open after
   * the server's end (`hold`).
   */
  onAnswer?: 'close' | 'send-on' | 'hold';
}

interface Answer {
  /** The answer's header block and body, as read (empty when none came). */
  head: string;
  body: string;
  /** Whether the body is as long as its Content-Length says. */
  complete: boolean;
  /** The socket's error, if any (a reset). */
  error: string | undefined;
  /** Bytes of body sent in all. */
  sent: number;
  /** Milliseconds from the answer's last byte to the connection's close. */
  closedAfter: number;
}

/** Sends an endless form with `Connection: close` over a socket of its own until answered or closed. */
function upload(path: string, { chunked, pace, onAnswer = 'close' }: Upload): Promise<Answer> {
  const url = new URL(path, t.baseUrl);
  const piece = Buffer.alloc(pace === 'slow' ? 1024 : 64 * 1024, 'z');
  return new Promise((resolve) => {
    // Node's client closes its side when the server closes its own, unless told to stay half-open.
    const socket = connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: onAnswer === 'hold' });
    let received = Buffer.alloc(0);
    let sent = 0;
    let error: string | undefined;
    let stopped = false;
    let answeredAt = Number.NaN;
    let probe: NodeJS.Timeout | undefined;
    const answer = () => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const head = end < 0 ? text : text.slice(0, end);
      const body = end < 0 ? '' : text.slice(end + 4);
      const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1]);
      return { head, body, complete: end >= 0 && Buffer.byteLength(body, 'latin1') === length };
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      if (Number.isNaN(answeredAt) && answer().complete) {
        answeredAt = performance.now();
        stopped = onAnswer !== 'send-on';
        if (onAnswer === 'close') socket.end();
        // The server's end came with the answer; a byte now and then tells when the socket is gone (reset).
        if (onAnswer === 'hold') probe = setInterval(() => write(Buffer.from('z'), () => undefined), 50);
      }
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      error = failure.code ?? failure.message;
    });
    socket.on('close', () => {
      clearInterval(probe);
      stopped = true;
      resolve({ ...answer(), error, sent, closedAfter: performance.now() - answeredAt });
    });
    const write = (bytes: Buffer, then: () => void) => {
      sent += bytes.length;
      const framed = chunked
        ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
        : bytes;
      if (pace === 'slow') socket.write(framed, () => setImmediate(then));
      else if (!socket.write(framed)) socket.once('drain', then);
      else if (pace === 'yielding') setImmediate(then);
      else then();
    };
    const pump = () => {
      if (stopped || socket.destroyed || sent + piece.length > SEND_AT_MOST) return;
      write(piece, pump);
    };
    const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${SEND_AT_MOST}`;
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${v.token}\r\n` +
        `Content-Type: ${MULTIPART_CONTENT_TYPE}\r\n${length}\r\nConnection: close\r\n\r\n`,
    );
    write(Buffer.from(`preamble of --${BOUNDARY}-less text\r\n`), pump);
  });
}

async function expectWhole413(request: Upload) {
  const visit = await createVisit(t, v);
  const answer = await upload(`/api/v1/site-visits/${visit.id}/return-label`, request);
  expect(answer.head.split(' ')[1], `${answer.error ?? 'closed'} after ${answer.sent} bytes`).toBe('413');
  expect(answer.complete, answer.body).toBe(true);
  expect(answer.head).toMatch(/^connection: close/im);
  expect(JSON.parse(answer.body).type).toMatch(/payload-too-large$/);
  return answer;
}

describe.each([
  ['a Content-Length past the bound (refused before the body is read)', false],
  ['a chunked body that goes past the bound', true],
])('an upload with Connection: close and %s', (_name, chunked) => {
  it.each(['burst', 'yielding', 'slow'] as const)('gets its 413 whole when the body comes %s', async (pace) => {
    for (let attempt = 0; attempt < 5; attempt++) await expectWhole413({ chunked, pace });
  });

  it('is closed by the server past the bound when the client never stops sending', async () => {
    const visit = await createVisit(t, v);
    const answer = await upload(`/api/v1/site-visits/${visit.id}/return-label`, {
      chunked,
      pace: 'burst',
      onAnswer: 'send-on',
    });
    expect(answer.sent).toBeLessThan(SEND_AT_MOST - 64 * 1024);
  });

  it('is closed by the server a few seconds after the answer when the client falls silent without closing', async () => {
    const answer = await expectWhole413({ chunked, pace: 'burst', onAnswer: 'hold' });
    // LINGER_MS, not the request's time (120 s); the margin is for a loaded machine.
    expect(answer.closedAfter).toBeGreaterThan(LINGER_MS / 2);
    expect(answer.closedAfter).toBeLessThan(LINGER_MS + 30_000);
  });
});
