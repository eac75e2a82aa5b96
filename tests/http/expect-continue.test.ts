/**
 * `Expect: 100-continue` is answered when the body is about to be read (src/http/expect-continue.ts): Node
 * wrote 100 to every request that asked, so a client without credentials, or declaring a body longer than the
 * route accepts, was invited to send all of it before its 401 or 413. A refusal is now the final status alone,
 * the connection closed; a request that passes is sent exactly one 100, then its answer.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_REQUEST_BYTES } from '../../src/modules/files/limits.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { createVisit, startVisitApp, type VisitTenant, visitBody } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

interface ContinueAnswer {
  /** How many `100 Continue` the service sent. */
  continues: number;
  /** Whether the body was sent: only after a 100, as curl does when the answer comes first. */
  bodySent: boolean;
  status: number;
  /** The final answer's header block, lower-cased. */
  head: string;
  body: any;
}

/**
 * POSTs with `Expect: 100-continue` on a connection of its own (`path` on the file's app, or a whole URL), and sends `body` only once a 100 came. Resolves
 * when the service closes the connection, or once the final answer is in whole (its Content-Length).
 */
function expectingContinue(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  declaredLength = body.length,
): Promise<ContinueAnswer> {
  const url = new URL(path, t.baseUrl);
  const lines = Object.entries({ host: url.host, ...headers, 'content-length': String(declaredLength) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () =>
      socket.write(`POST ${url.pathname} HTTP/1.1\r\n${lines}expect: 100-continue\r\n\r\n`),
    );
    let received = '';
    let continues = 0;
    let bodySent = false;
    const final = () => {
      const [head = '', text = ''] = received.split('\r\n\r\n');
      return { head: head.toLowerCase(), text };
    };
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      while (received.startsWith(CONTINUE)) {
        received = received.slice(CONTINUE.length);
        continues++;
        if (!bodySent) socket.write(body);
        bodySent = true;
      }
      if (CONTINUE.startsWith(received)) return;
      const { head, text } = final();
      const length = /\r\ncontent-length: *(\d+)/.exec(head)?.[1];
      if (length !== undefined && Buffer.byteLength(text, 'latin1') >= Number(length)) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const { head, text } = final();
      resolve({
        continues,
        bodySent,
        status: Number(head.split(' ')[1]),
        head,
        body: text ? JSON.parse(text) : undefined,
      });
    });
  });
}

const uploadPath = (visitId: string) => `/api/v1/site-visits/${visitId}/return-label`;

describe('Expect: 100-continue', () => {
  it('answers a bad token with 401 and no 100, and closes the connection', async () => {
    const visit = await createVisit(t, v);
    const form = fileForm(pdfBytes(4096));
    const headers = { authorization: 'Bearer not-a-token', 'content-type': MULTIPART_CONTENT_TYPE };
    const answer = await expectingContinue(uploadPath(visit.id), headers, form);
    expect(answer).toMatchObject({ status: 401, continues: 0, bodySent: false });
    expect(answer.head).toMatch(/\r\nconnection: close(\r\n|$)/);
  });

  it('answers an upload whose Content-Length no acceptable file can have with 413 and no 100', async () => {
    const visit = await createVisit(t, v);
    const headers = { authorization: `Bearer ${v.token}`, 'content-type': MULTIPART_CONTENT_TYPE };
    const answer = await expectingContinue(
      uploadPath(visit.id),
      headers,
      Buffer.alloc(0),
      MAX_UPLOAD_REQUEST_BYTES + 1,
    );
    expect(answer).toMatchObject({ status: 413, continues: 0, bodySent: false });
    expect(answer.body.type).toMatch(/payload-too-large$/);
    expect(answer.head).toMatch(/\r\nconnection: close(\r\n|$)/);
  });

  it('answers a JSON body longer than the operation accepts with 413 and no 100', async () => {
    const headers = { authorization: `Bearer ${v.fullToken}`, 'content-type': 'application/json' };
    const answer = await expectingContinue('/api/v1/site-visits', headers, Buffer.alloc(0), 2 * 1024 * 1024);
    expect(answer).toMatchObject({ status: 413, continues: 0, bodySent: false });
    expect(answer.body.type).toMatch(/payload-too-large$/);
  });

  it('answers a client past its rate limit with 429 and no 100', async () => {
    const limited = await startTestApp({ config: { rateLimitPerMinute: 1 } });
    try {
      expect((await fetch(`${limited.baseUrl}/api/v1/sites`)).status).toBe(401);
      const headers = { authorization: 'Bearer not-a-token', 'content-type': 'application/json' };
      const body = Buffer.from(JSON.stringify(visitBody(v)));
      const answer = await expectingContinue(`${limited.baseUrl}/api/v1/site-visits`, headers, body);
      expect(answer).toMatchObject({ status: 429, continues: 0, bodySent: false });
      expect(answer.body.type).toMatch(/rate-limit-exceeded$/);
    } finally {
      await limited.close();
    }
  });

  it('sends one 100 to a good upload, then stores it: 201', async () => {
    const visit = await createVisit(t, v);
    const headers = { authorization: `Bearer ${v.token}`, 'content-type': MULTIPART_CONTENT_TYPE };
    const answer = await expectingContinue(uploadPath(visit.id), headers, fileForm(pdfBytes(4096)));
    expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 201, continues: 1, bodySent: true });
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data.attributes.returnLabel).not.toBeNull();
  });

  it('sends one 100 to a good JSON create, then creates: 201', async () => {
    const headers = { authorization: `Bearer ${v.fullToken}`, 'content-type': 'application/json' };
    const body = Buffer.from(JSON.stringify(visitBody(v)));
    const answer = await expectingContinue('/api/v1/site-visits', headers, body);
    expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 201, continues: 1, bodySent: true });
    expect(answer.body.data.attributes.clientTicketNumber).toBe(JSON.parse(body.toString()).clientTicketNumber);
  });
});
