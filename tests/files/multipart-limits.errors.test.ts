/**
 * The multipart parser's limits (src/modules/files/limits.ts MULTIPART_LIMITS), each gone past: a 422 that
 * names the limit, never the "file is required" of a form without a file, and nothing stored. The file
 * size limit (413) is tested with the other size rules in tests/return-labels/return-labels.errors.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import {
  closingDelimiter,
  fileForm,
  multipartBody,
  pdfBytes,
  rawPart,
  storedBlobCount,
  uploadReturnLabel,
} from '../helpers/multipart.js';
import { startVisitApp, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

const FILE_DISPOSITION = 'Content-Disposition: form-data; name="file"; filename="label.pdf"';

/** `count` header fields that no upload needs. */
function extraHeaders(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `X-Extra-${index}: ${index}`);
}

const upload = (body: Buffer) => uploadReturnLabel(t, v, body);
const blobCount = () => storedBlobCount(t, v.tenantId);

/** A 422 whose `errors.file` (and detail) say `text`, with nothing stored. */
async function expectRefused(body: Buffer, text: RegExp) {
  const before = await blobCount();
  const response = await upload(body);
  expect(response.status).toBe(422);
  expect(response.contentType).toMatch(/^application\/problem\+json/);
  expect(response.body.type).toMatch(/validation-error$/);
  expect(response.body.errors.file.join(' ')).toMatch(text);
  expect(response.body.errors.file.join(' ')).not.toMatch(/is required/);
  expect(await blobCount()).toBe(before);
  return response;
}

describe('headerPairs: 16 header fields per part', () => {
  it('accepts a file part with 16 header fields, Content-Disposition the last', async () => {
    const response = await upload(
      Buffer.concat([rawPart([...extraHeaders(15), FILE_DISPOSITION], pdfBytes()), closingDelimiter()]),
    );
    expect(response.status).toBe(201);
  });

  it('refuses a file part with 17, Content-Disposition the last, naming the limit (it looked like no file)', async () => {
    const response = await expectRefused(
      Buffer.concat([rawPart([...extraHeaders(16), FILE_DISPOSITION], pdfBytes()), closingDelimiter()]),
      /part 1 of the form carries more than 16 header fields/,
    );
    expect(response.body.detail).toMatch(/more than 16 header fields/);
  });

  it('refuses a file part with 17, Content-Disposition the first: the answer does not depend on their order', async () => {
    await expectRefused(
      Buffer.concat([rawPart([FILE_DISPOSITION, ...extraHeaders(16)], pdfBytes()), closingDelimiter()]),
      /part 1 of the form carries more than 16 header fields/,
    );
  });

  it('names the part: a second part with 17 after a good file', async () => {
    await expectRefused(
      Buffer.concat([
        rawPart([FILE_DISPOSITION], pdfBytes()),
        rawPart([...extraHeaders(16), 'Content-Disposition: form-data; name="note"'], 'x'),
        closingDelimiter(),
      ]),
      /part 2 of the form carries more than 16 header fields/,
    );
  });
});

describe('headerSize: 80 KiB of header block per part', () => {
  it('refuses a part whose Content-Disposition comes after the first 81,920 bytes of its header block', async () => {
    await expectRefused(
      Buffer.concat([rawPart([`X-Padding: ${'a'.repeat(82_000)}`, FILE_DISPOSITION], pdfBytes()), closingDelimiter()]),
      /part 1 of the form has no Content-Disposition header .*first 81920 bytes of its header block/,
    );
  });
});

describe('parts, files and fields: how many the parser reads', () => {
  // Parts that the plugin reads but does not deliver (a name every object has, busboy's skipped parts)
  // are the ones that reach these limits: any delivered stray part is refused by name first.
  it('refuses a form of more than 6 parts', async () => {
    const unreadableNames = Array.from({ length: 7 }, (_, index) =>
      rawPart([`Content-Disposition: form-data; name*=utf-8''a%0A${index}`], 'x'),
    );
    const response = await expectRefused(
      Buffer.concat([...unreadableNames, closingDelimiter()]),
      /the form has more than 6 parts/,
    );
    expect(response.body.detail).toMatch(/more than 6 parts/);
  });

  it('refuses a form of more than 2 files', async () => {
    const files = Array.from({ length: 3 }, () =>
      rawPart(['Content-Disposition: form-data; name="constructor"; filename="a.pdf"'], pdfBytes(100)),
    );
    await expectRefused(Buffer.concat([...files, closingDelimiter()]), /the form has more than 2 files/);
  });

  it('refuses a form of more than 4 plain fields', async () => {
    const fields = Array.from({ length: 5 }, () => rawPart(['Content-Disposition: form-data; name="__proto__"'], 'x'));
    await expectRefused(Buffer.concat([...fields, closingDelimiter()]), /more than 4 plain \(non-file\) fields/);
  });

  it('names a delivered stray part rather than a limit', async () => {
    const response = await upload(
      multipartBody([
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
        ...Array.from({ length: 10 }, (_, index) => ({ name: `f${index}`, data: 'x' })),
      ]),
    );
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ file: ['must be the only part of the form'], f0: ['is not a known field'] });
  });
});

describe('fieldSize: 64 KiB of a plain value', () => {
  it('says that a stray value went past it', async () => {
    const response = await upload(multipartBody([{ name: 'note', data: 'x'.repeat(64 * 1024 + 1) }]));
    expect(response.status).toBe(422);
    expect(response.body.errors.note).toEqual([
      'is not a known field',
      'is longer than 65536 bytes, the most read of a plain form value',
    ]);
  });

  it('says nothing of it for a value of exactly 64 KiB', async () => {
    const response = await upload(multipartBody([{ name: 'note', data: 'x'.repeat(64 * 1024) }]));
    expect(response.status).toBe(422);
    expect(response.body.errors.note).toEqual(['is not a known field']);
  });

  it('says it for the file sent as a long plain value too', async () => {
    const response = await upload(multipartBody([{ name: 'file', data: 'x'.repeat(70 * 1024) }]));
    expect(response.status).toBe(422);
    expect(response.body.errors.file).toEqual([
      'must be a file part: its Content-Disposition has no filename, so it is a plain form value',
      'is longer than 65536 bytes, the most read of a plain form value',
    ]);
  });
});

describe('fileSize: 10 MiB', () => {
  it('stays 413 payload-too-large', async () => {
    const response = await upload(fileForm(pdfBytes(10 * 1024 * 1024 + 1)));
    expect(response.status).toBe(413);
    expect(response.body.type).toMatch(/payload-too-large$/);
  });
});
