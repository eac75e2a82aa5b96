/**
 * An upload's body is bounded whatever it declares. A Content-Length past 10 MiB and the multipart framing is
 * refused before the body is read (tests/return-labels/return-labels.errors.test.ts); a body sent chunked (no
 * Content-Length) was read to its end however long it was: 200 MB of bytes before the first delimiter, or after
 * the closing one, were read and scanned before the 422, or before the 201 of the file in front of them
 * (hostile-tenant probe). Past the bound it is now 413 as soon as the bytes show it, nothing stored; the rest
 * is read and dropped (the answer must not be reset on its way) up to the bound once more, then the connection
 * is closed.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_REQUEST_BYTES } from '../../src/modules/files/limits.js';
import type { TestApp } from '../helpers/app.js';
import { BOUNDARY, fileForm, MULTIPART_CONTENT_TYPE, pdfBytes, storedBlobCount } from '../helpers/multipart.js';
import { createVisit, startVisitApp, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

/** What a client that does not stop would send: three times the bound. */
const SEND_AT_MOST = 3 * MAX_UPLOAD_REQUEST_BYTES;
const FILLER = Buffer.alloc(64 * 1024, 'z');

interface ChunkedAnswer {
  status: number;
  /** The answer's header block and body, as sent. */
  head: string;
  body: string;
  /** Bytes sent before the answer came. */
  sentBefore: number;
  /** Bytes sent in all, until the server closed the connection (or SEND_AT_MOST, or the body's end). */
  sent: number;
}

/**
 * Sends `head` as a chunked body over a socket of its own, then (`filler`) filler that does not stop with the
 * answer, as a hostile client's, until the server closes the connection or SEND_AT_MOST bytes went.
 */
function chunkedUpload(path: string, head: Buffer, filler = true): Promise<ChunkedAnswer> {
  const url = new URL(path, t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let sent = 0;
    let sentBefore: number | undefined;
    let received = '';
    let closed = false;
    let bodyEnded = false;
    socket.on('data', (data: Buffer) => {
      sentBefore ??= sent;
      received += data.toString('latin1');
      // A client whose body ended closes once answered (a close before that would abort the request).
      const [answerHead = '', body] = received.split('\r\n\r\n');
      const length = Number(/^content-length: *(\d+)/im.exec(answerHead)?.[1]);
      if (bodyEnded && body !== undefined && Buffer.byteLength(body, 'latin1') >= length) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      const [answerHead = '', body = ''] = received.split('\r\n\r\n');
      if (sentBefore === undefined) return reject(new Error(`no answer; ${sent} bytes sent`));
      resolve({ status: Number(answerHead.split(' ')[1]), head: answerHead, body, sentBefore, sent });
    });
    const chunk = (bytes: Buffer) => {
      sent += bytes.length;
      return socket.write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]));
    };
    const pump = () => {
      while (filler && !closed && sent < SEND_AT_MOST) if (!chunk(FILLER)) return void socket.once('drain', pump);
      if (closed) return;
      bodyEnded = true;
      socket.write('0\r\n\r\n');
    };
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${v.token}\r\n` +
        `Content-Type: ${MULTIPART_CONTENT_TYPE}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    chunk(head);
    pump();
  });
}

async function expectTooLarge(head: Buffer) {
  const visit = await createVisit(t, v);
  const before = await storedBlobCount(t, v.tenantId);
  const response = await chunkedUpload(`/api/v1/site-visits/${visit.id}/return-label`, head);
  expect(response.status).toBe(413);
  expect(response.head).toMatch(/^content-type: application\/problem\+json/im);
  expect(JSON.parse(response.body).type).toMatch(/payload-too-large$/);
  // Answered, and closed, without waiting for the rest (the bound twice, and what the sockets hold, went).
  expect(response.sentBefore).toBeLessThanOrEqual(response.sent);
  expect(response.sent).toBeLessThan(SEND_AT_MOST);
  expect(await storedBlobCount(t, v.tenantId)).toBe(before);
  const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
  expect(read.body.data.attributes.returnLabel).toBeNull();
}

describe('a chunked upload body longer than a 10 MiB file and its framing can be', () => {
  it('is 413 when the bytes come before any delimiter', async () => {
    await expectTooLarge(Buffer.from(`preamble of --${BOUNDARY}-less text\r\n`));
  });

  it('is 413 when they come after the closing delimiter of a good file, which is not kept', async () => {
    const form = fileForm(pdfBytes(4096));
    expect(form.toString('latin1').endsWith(`--${BOUNDARY}--\r\n`)).toBe(true);
    await expectTooLarge(form);
  });

  it('is still read when it is within the bound: a chunked upload of a good file is stored', async () => {
    const visit = await createVisit(t, v);
    const response = await chunkedUpload(
      `/api/v1/site-visits/${visit.id}/return-label`,
      fileForm(pdfBytes(4096)),
      false,
    );
    expect(response.status, response.body).toBe(201);
    expect(response.sent).toBeLessThan(8192);
  });
});
