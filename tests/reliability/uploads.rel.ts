/**
 * Hostile uploads against an API process of its own (its TMPDIR watched, its memory sampled): spoofed
 * types, polyglots, empty and boundary-sized files, lying Content-Length, many parts, huge headers, path
 * traversal and header-injection file names, slow and stalled bodies. Each is answered 4xx (or 201 where
 * the file is legitimate, e.g. exactly 10 MiB, and then stored under a safe name); the process never
 * crashes, leaves no temporary file and no stored blob without a version, and its memory stays bounded.
 */
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rssBytes } from '../../bench/lib/processes.js';
import { createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import {
  BOUNDARY,
  fileForm,
  jpegBytes,
  multipartBody,
  MULTIPART_CONTENT_TYPE,
  pdfBytes,
  pngBytes,
} from '../helpers/multipart.js';
import { reportFigure } from './lib/figures.js';
import { type FaultStage, faultStage, type Service } from './lib/service.js';

const MIB = 1024 * 1024;
const REQUEST_TIMEOUT_MS = 3_000;

let stage: FaultStage;
let api: Service;
let m: MessageTenant;
let messageId: string;
let tmp: string;
/** What the process's TMPDIR held once it had started (tsx keeps its own directory there). */
let tmpAtStart: string[];
let peakRss = 0;
let sampler: NodeJS.Timeout;

beforeAll(async () => {
  stage = await faultStage('uploads');
  tmp = path.join(stage.env.DATA_DIR!, 'tmp');
  fs.mkdirSync(tmp);
  api = await stage.startApi({ TMPDIR: tmp, REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  tmpAtStart = fs.readdirSync(tmp);
  m = await messageTenant(stage.operator);
  messageId = (await createMessage(stage.operator, m)).id;
  sampler = setInterval(() => void rssBytes(api.pid).then((rss) => (peakRss = Math.max(peakRss, rss ?? 0))), 50);
});
afterAll(async () => {
  clearInterval(sampler);
  await stage?.close();
});

interface Outcome {
  status: number | 'closed';
  contentType: string;
  text: string;
}

/**
 * One request on a connection of its own: the headers as given (Content-Length included, true or not),
 * then the body in `chunks`, `delayMs` apart. Resolves with the answer, or 'closed' when the server closed
 * the connection without one.
 */
function send(
  route: string,
  headers: Record<string, string | number>,
  chunks: Buffer[],
  delayMs = 0,
): Promise<Outcome> {
  const url = new URL(route, api.baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Outcome) => {
      if (!settled) resolve(outcome);
      settled = true;
    };
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${m.fullToken}`, ...headers },
        agent: false,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () =>
          done({ status: response.statusCode!, contentType: String(response.headers['content-type'] ?? ''), text }),
        );
        response.on('error', () =>
          done({ status: response.statusCode!, contentType: String(response.headers['content-type'] ?? ''), text }),
        );
      },
    );
    request.on('error', () => done({ status: 'closed', contentType: '', text: '' }));
    void (async () => {
      for (const chunk of chunks) {
        if (settled || request.destroyed) return;
        request.write(chunk);
        if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
      if (!settled && !request.destroyed) request.end();
    })();
  });
}

const returnLabel = () => `/api/v1/site-visits/${m.visitId}/return-label`;
const attachment = () => `/api/v1/messages/${messageId}/file-attachment`;
const form = (body: Buffer) => ({
  headers: { 'content-type': MULTIPART_CONTENT_TYPE, 'content-length': body.length },
  chunks: [body],
});

interface Case {
  name: string;
  route: () => string;
  request: () => { headers: Record<string, string | number>; chunks: Buffer[]; delayMs?: number };
  /** The expected status; '4xx-or-closed' also allows the connection to be closed without an answer. */
  expect: number | '4xx' | '4xx-or-closed' | '4xx-or-201';
  check?: (outcome: Outcome) => void | Promise<void>;
}

/** The file name the service stored for the newest version of an upload it accepted. */
const storedName = (outcome: Outcome): string => {
  const versions = JSON.parse(outcome.text).data.returnLabel.versions as Array<{ version: number; fileName: string }>;
  return versions.at(-1)!.fileName;
};

const html = Buffer.from('<html><script>alert(document.cookie)</script></html>');
const CASES: Case[] = [
  {
    name: 'PNG declared application/pdf as label.pdf',
    route: returnLabel,
    request: () => form(fileForm(pngBytes(), 'label.pdf', 'application/pdf')),
    expect: 415,
  },
  {
    name: 'HTML with script declared image/jpeg as photo.jpg',
    route: attachment,
    request: () => form(fileForm(html, 'photo.jpg', 'image/jpeg')),
    expect: 415,
  },
  {
    name: 'SVG with script declared image/png',
    route: attachment,
    request: () =>
      form(fileForm(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 'x.png', 'image/png')),
    expect: 415,
  },
  {
    name: 'polyglot: HTML first, PDF header later',
    route: returnLabel,
    request: () => form(fileForm(Buffer.concat([html, pdfBytes(1024)]), 'label.pdf')),
    expect: 415,
  },
  {
    name: 'polyglot: PHP with a PNG signature inside',
    route: attachment,
    request: () =>
      form(fileForm(Buffer.concat([Buffer.from('<?php system($_GET["c"]); ?>'), pngBytes(512)]), 'x.png', 'image/png')),
    expect: 415,
  },
  {
    name: 'a JPEG declared application/pdf on the PDF-only route',
    route: returnLabel,
    request: () => form(fileForm(jpegBytes(), 'label.pdf')),
    expect: 415,
  },
  { name: 'zero bytes', route: returnLabel, request: () => form(fileForm(Buffer.alloc(0), 'label.pdf')), expect: 422 },
  {
    name: 'exactly 10 MiB (legitimate)',
    route: returnLabel,
    request: () => form(fileForm(pdfBytes(10 * MIB), 'label.pdf')),
    expect: 201,
  },
  {
    name: '10 MiB and one byte',
    route: returnLabel,
    request: () => form(fileForm(pdfBytes(10 * MIB + 1), 'label.pdf')),
    expect: 413,
  },
  {
    name: 'Content-Length claiming 50 MiB',
    route: returnLabel,
    request: () => ({
      headers: { 'content-type': MULTIPART_CONTENT_TYPE, 'content-length': 50 * MIB },
      chunks: [fileForm(pdfBytes(4096))],
    }),
    expect: 413,
  },
  {
    name: 'Content-Length shorter than the body',
    route: returnLabel,
    request: () => {
      const body = fileForm(pdfBytes(8192));
      return {
        headers: { 'content-type': MULTIPART_CONTENT_TYPE, 'content-length': 4096 },
        chunks: [body.subarray(0, 4096)],
      };
    },
    expect: 422,
  },
  {
    name: 'Content-Length longer than the body, then silence',
    route: returnLabel,
    request: () => {
      const body = fileForm(pdfBytes(8192));
      return {
        headers: { 'content-type': MULTIPART_CONTENT_TYPE, 'content-length': body.length + 10_000 },
        chunks: [body, Buffer.alloc(0)],
        delayMs: REQUEST_TIMEOUT_MS * 2,
      };
    },
    expect: '4xx-or-closed',
  },
  {
    name: 'slow body: one byte per 100 ms',
    route: attachment,
    request: () => {
      const body = fileForm(pdfBytes(2048));
      return {
        headers: { 'content-type': MULTIPART_CONTENT_TYPE, 'content-length': body.length },
        chunks: [...body.subarray(0, 200)].map((byte) => Buffer.from([byte])),
        delayMs: 100,
      };
    },
    expect: '4xx-or-closed',
  },
  {
    name: '500 extra form fields',
    route: attachment,
    request: () =>
      form(
        multipartBody([
          { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
          ...Array.from({ length: 500 }, (_, index) => ({ name: `f${index}`, data: 'x' })),
        ]),
      ),
    expect: 422,
  },
  {
    name: '200 file parts',
    route: attachment,
    request: () =>
      form(
        multipartBody(
          Array.from({ length: 200 }, () => ({
            name: 'file',
            filename: 'a.pdf',
            contentType: 'application/pdf',
            data: pdfBytes(1024),
          })),
        ),
      ),
    expect: 422,
  },
  {
    name: 'a part header of 200 KB (legitimate file, name cut to 200 characters)',
    route: returnLabel,
    request: () =>
      form(
        Buffer.concat([
          Buffer.from(
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${'a'.repeat(200_000)}.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
          ),
          pdfBytes(),
          Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
        ]),
      ),
    expect: 201,
    check: (outcome) => expect(storedName(outcome).length).toBeLessThanOrEqual(200),
  },
  {
    name: 'HTTP headers of 20 KB',
    route: returnLabel,
    request: () => ({
      ...form(fileForm(pdfBytes())),
      headers: { ...form(fileForm(pdfBytes())).headers, cookie: 'c'.repeat(20_000) },
    }),
    expect: 431,
  },
  {
    name: 'multipart without a boundary',
    route: attachment,
    request: () => ({
      headers: { 'content-type': 'multipart/form-data', 'content-length': 10 },
      chunks: [Buffer.from('0123456789')],
    }),
    expect: '4xx',
  },
  {
    name: 'gzip Content-Encoding',
    route: returnLabel,
    request: () => ({
      ...form(fileForm(pdfBytes())),
      headers: { ...form(fileForm(pdfBytes())).headers, 'content-encoding': 'gzip' },
    }),
    expect: '4xx',
  },
  {
    name: 'the file in another field',
    route: returnLabel,
    request: () =>
      form(multipartBody([{ name: 'upload', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() }])),
    expect: 422,
  },
  {
    name: 'path traversal file name (legitimate file, stored under a safe name)',
    route: returnLabel,
    request: () => form(fileForm(pdfBytes(), '../../../../etc/passwd.pdf')),
    expect: 201,
    check: (outcome) => expect(storedName(outcome)).not.toMatch(/[/\\]|\.\./),
  },
  {
    name: 'header-injection file name (CR LF, NUL)',
    route: attachment,
    request: () => form(fileForm(pdfBytes(), 'a\r\nX-Injected: 1\u0000.pdf')),
    expect: '4xx-or-201',
    check: async (outcome) => {
      if (outcome.status !== 201) return;
      const download = await fetch(new URL(attachment(), api.baseUrl), {
        headers: { authorization: `Bearer ${m.fullToken}` },
      });
      expect(download.headers.get('x-injected')).toBeNull();
      expect(download.headers.get('content-disposition') ?? '').not.toMatch(/[\r\n]/);
      expect(download.headers.get('content-disposition') ?? '').not.toContain('\u0000');
    },
  },
];

it(`answers ${CASES.length} hostile uploads without a 5xx, a crash, a leftover file or unbounded memory`, {
  timeout: 120_000,
}, async () => {
  const baseline = (await rssBytes(api.pid)) ?? 0;
  const results: string[] = [];
  let fourxx = 0;
  let legit = 0;
  for (const each of CASES) {
    const { headers, chunks, delayMs } = each.request();
    const outcome = await send(each.route(), headers, chunks, delayMs);
    const label = `${each.name}: ${outcome.status} ${outcome.text.slice(0, 200)}`;
    results.push(label);
    if (typeof outcome.status === 'number') {
      expect(outcome.status, label).toBeLessThan(500);
      if (outcome.status >= 400) expect(outcome.contentType, label).toMatch(/^application\/problem\+json/);
    }
    const expected = each.expect;
    if (expected === '4xx') expect(outcome.status, label).toBeGreaterThanOrEqual(400);
    else if (expected === '4xx-or-closed')
      expect(outcome.status === 'closed' || (outcome.status >= 400 && outcome.status < 500), label).toBe(true);
    else if (expected === '4xx-or-201')
      expect(outcome.status === 201 || (typeof outcome.status === 'number' && outcome.status >= 400), label).toBe(true);
    else expect(outcome.status, label).toBe(expected);
    await each.check?.(outcome);
    if (outcome.status === 201) legit++;
    else fourxx++;
    expect(api.child.exitCode, `the API process died after: ${label}\n${api.output()}`).toBeNull();
  }

  // Four oversized uploads at once: memory stays bounded (streamed, never buffered whole).
  const concurrent = await Promise.all(
    Array.from({ length: 4 }, () =>
      send(
        returnLabel(),
        form(fileForm(pdfBytes(10 * MIB + 1))).headers,
        form(fileForm(pdfBytes(10 * MIB + 1))).chunks,
      ),
    ),
  );
  for (const outcome of concurrent) expect(outcome.status).toBe(413);

  // No crash, no temporary file, no blob without a version.
  expect((await fetch(`${api.baseUrl}/ready`)).status).toBe(200);
  const leftovers = fs.readdirSync(tmp).filter((entry) => !tmpAtStart.includes(entry));
  expect(leftovers).toEqual([]);
  const orphans = await stage.countRows(
    'select count(*)::int as n from file_blobs b where not exists (select 1 from file_versions v where v.blob_id = b.id)',
  );
  expect(orphans).toBe(0);
  const growthMib = Math.round((peakRss - baseline) / MIB);
  expect(growthMib).toBeLessThan(200);
  reportFigure(
    'uploads',
    `${CASES.length} hostile cases: ${fourxx} refused 4xx, ${legit} legitimate 201 (exactly 10 MiB, sanitised names), 0 5xx, 0 crashes, ` +
      `${leftovers.length} temp files, ${orphans} orphan blobs, peak RSS +${growthMib} MiB over baseline (4 concurrent oversized uploads included)`,
  );
});
