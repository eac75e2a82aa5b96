/**
 * A download must be read within RESPONSE_TIMEOUT_MS (hostile-tenant probe): a client that asked for a
 * 10 MiB file and stopped reading held its connection and over a MiB of buffered chunks for ever. Now the
 * connection is closed at the deadline; a client that reads gets the whole file, keep-alive included.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { messageTenant } from '../helpers/messages.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';

const FILE_BYTES = 10 * 1024 * 1024;
/** Long enough for a client that reads to take the whole file on a loaded machine; a stalled one waits twice it. */
const RESPONSE_TIMEOUT_MS = 5_000;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { responseTimeoutMs: RESPONSE_TIMEOUT_MS } });
});
afterAll(async () => t?.close());

/** Asks for the download and reads nothing for `stallMs`; then reads what still comes, until the close or `untilMs`. */
function stalledDownload(path: string, token: string, stallMs: number, untilMs: number) {
  const { port } = new URL(t.baseUrl);
  return new Promise<{ closed: boolean; bytes: number }>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`),
    );
    let bytes = 0;
    socket.pause();
    socket.on('data', (chunk) => (bytes += chunk.length));
    socket.on('error', () => undefined);
    const give = setTimeout(() => {
      socket.destroy();
      resolve({ closed: false, bytes });
    }, untilMs);
    socket.on('close', () => {
      clearTimeout(give);
      resolve({ closed: true, bytes });
    });
    setTimeout(() => socket.resume(), stallMs);
  });
}

it('a download nobody reads is cut at RESPONSE_TIMEOUT_MS; one that is read arrives whole', async () => {
  const m = await messageTenant(t);
  const label = `/api/v1/site-visits/${m.visitId}/return-label`;
  const uploaded = await t.http.post(label, {
    token: m.token,
    body: fileForm(pdfBytes(FILE_BYTES)),
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
  expect(uploaded.status).toBe(201);

  // Both at once (the deadlines are each request's own), so that the waits overlap.
  const stalled = stalledDownload(label, m.token, RESPONSE_TIMEOUT_MS * 2, RESPONSE_TIMEOUT_MS * 6);
  const read = await fetch(`${t.baseUrl}${label}`, { headers: { authorization: `Bearer ${m.token}` } });
  // The answer's deadline started before its headers arrived.
  const answered = Date.now();
  expect((await read.arrayBuffer()).byteLength).toBe(FILE_BYTES);

  const cut = await stalled;
  expect(cut.closed).toBe(true);
  expect(cut.bytes).toBeLessThan(FILE_BYTES);
  // The deadline of an answer already sent does not close its keep-alive connection later.
  const pastDeadline = answered + RESPONSE_TIMEOUT_MS * 1.5 - Date.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, pastDeadline)));
  expect((await t.http.get('/health')).status).toBe(200);
}, 90_000);
