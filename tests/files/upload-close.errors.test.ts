/**
 * An over-size upload from a client that sends `Connection: close` gets its 413 whole. Node closes such a
 * connection as soon as the answer is written; with the client's body still arriving, the kernel answered
 * those bytes with a reset, and a client still writing met the reset before it read the 413 (`EPIPE`,
 * `ECONNRESET`, no answer). The server now reads and drops the rest of the body after the answer, up to
 * the bound and for a few seconds at most, before it closes (a lingering close, src/http/lingering-close.ts).
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../../src/http/lingering-close.js';
import { MAX_UPLOAD_REQUEST_BYTES } from '../../src/modules/files/limits.js';
import type { TestApp } from '../helpers/app.js';
import { BOUNDARY, fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
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
  /** Called once the answer is whole. */
  answered?: () => void;
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

/**
 * Sends an endless form with `Connection: close` over a socket of its own until answered or closed (to the
 * file's app, or `to`'s).
 */
function upload(path: string, { chunked, pace, onAnswer = 'close', answered }: Upload, to = { t, v }): Promise<Answer> {
  const url = new URL(path, to.t.baseUrl);
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
        answered?.();
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
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${to.v.token}\r\n` +
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

describe.each([
  ['a Content-Length past the bound', false, 'slow'],
  ['a chunked body past the bound', true, 'burst'],
] as const)('the app closing', (name, chunked, pace) => {
  it(`closes a connection lingering after the 413 of ${name} at once, and lets a request being served finish`, async () => {
    // Lingering far longer than the test may take: only the app's close can end the connection now.
    const own = await startVisitApp({ lingerMs: 3_600_000 });
    try {
      const events: string[] = [];
      const path = async () => `/api/v1/site-visits/${(await createVisit(own.t, own.v)).id}/return-label`;
      const [refusedPath, goodPath] = [await path(), await path()];
      let answered!: () => void;
      const lingeringAnswered = new Promise<void>((resolve) => (answered = resolve));
      // On after the answer (a byte every 50 ms), without closing: the connection lingers.
      const lingering = upload(refusedPath, { chunked, pace, onAnswer: 'hold', answered }, own);
      await lingeringAnswered;

      // Served: its handler is reading the body (the 100 goes on its first read), which waits for the close.
      const served = servedUpload(own.t, own.v, goodPath, fileForm(pdfBytes()));
      await served.reading;
      const closed = own.t.app.close().then(() => events.push('app closed'));
      const refused = await lingering;
      events.push('lingering connection closed');
      // Sent only now, and still answered: the close waited for it.
      events.push('served request sends its body');
      served.send();
      expect(await served.status).toBe(201);
      await closed;

      expect(events).toEqual(['lingering connection closed', 'served request sends its body', 'app closed']);
      expect(refused.head.split(' ')[1]).toBe('413');
      expect(refused.complete, refused.body).toBe(true);
    } finally {
      await own.t.close();
    }
  });
});

/** An upload that asks `Expect: 100-continue`: `reading` once the server reads its body, which `send` sends. */
function servedUpload(app: TestApp, tenant: VisitTenant, path: string, body: Buffer) {
  const url = new URL(path, app.baseUrl);
  const headers = {
    authorization: `Bearer ${tenant.token}`,
    'content-type': MULTIPART_CONTENT_TYPE,
    'content-length': String(body.length),
    expect: '100-continue',
  };
  const request = httpRequest({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers,
    agent: false,
  });
  const reading = new Promise<void>((resolve) => request.once('continue', resolve));
  const status = new Promise<number>((resolve, reject) => {
    request.once('response', (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', reject);
  });
  request.flushHeaders();
  return { reading, status, send: () => request.end(body) };
}
