/**
 * Forms that cannot be read, or whose one part is not the file: each answered with a 422 that says what is
 * wrong (which part, which header, which delimiter), never the misleading "file is required" of a form
 * that simply has no file part, and never a problem that grows with the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DETAIL } from '../../src/http/problem.js';
import type { TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, uploadAttachment } from '../helpers/messages.js';
import {
  BOUNDARY,
  closingDelimiter,
  fileForm,
  MULTIPART_CONTENT_TYPE,
  multipartBody,
  pdfBytes,
  rawPart,
  uploadReturnLabel,
} from '../helpers/multipart.js';
import { startVisitApp, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

const upload = (body: Buffer, contentType?: string) => uploadReturnLabel(t, v, body, contentType);

/** A 422 naming only `file`, whose one message says `text`. */
async function expectFileError(body: Buffer, text: RegExp, contentType?: string) {
  const response = await upload(body, contentType);
  expect(response.status).toBe(422);
  expect(response.body.type).toMatch(/validation-error$/);
  expect(Object.keys(response.body.errors)).toEqual(['file']);
  expect(response.body.errors.file).toHaveLength(1);
  expect(response.body.errors.file[0]).toMatch(text);
  return response;
}

const PDF = pdfBytes();
const form = (...parts: Buffer[]) => Buffer.concat([...parts, closingDelimiter()]);

describe('a part the parser skips, named with why', () => {
  it.each([
    ['no Content-Disposition', ['Content-Type: application/pdf'], /part 1 .* has no Content-Disposition header/],
    ['no header at all', [], /part 1 .* has no Content-Disposition header/],
    [
      'a line that is not a header field first',
      ['not a header', 'Content-Disposition: form-data; name="file"; filename="a.pdf"'],
      /part 1 .* has no Content-Disposition header among the well-formed lines/,
    ],
    [
      'Content-Disposition attachment',
      ['Content-Disposition: attachment; name="file"; filename="a.pdf"'],
      /part 1 .* has Content-Disposition "attachment", not form-data/,
    ],
  ])('%s', async (_label, headers, text) => {
    const response = await expectFileError(form(rawPart(headers, PDF)), text);
    expect(response.body.detail).toMatch(/^The multipart\/form-data body could not be read: part 1/);
  });

  it('a part without a header block (no empty line ends it)', async () => {
    const body = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n--${BOUNDARY}--\r\n`);
    await expectFileError(body, /part 1 .* has no header block/);
  });

  it('a later part, after the file', async () => {
    await expectFileError(
      form(rawPart(['Content-Disposition: form-data; name="file"; filename="a.pdf"'], PDF), rawPart([], 'x')),
      /part 2 .* has no Content-Disposition header/,
    );
  });

  it('a name or filename with a line break', async () => {
    await expectFileError(
      form(rawPart([`Content-Disposition: form-data; name="file"; filename*=utf-8''a%0D%0Ab.pdf`], PDF)),
      /cannot be read as form-data with a name \(a name or filename with a line break is not read\)/,
    );
  });
});

describe('names and filenames', () => {
  it('an empty part name: the file error says so, no made-up field name', async () => {
    await expectFileError(
      form(rawPart(['Content-Disposition: form-data; name=""; filename="a.pdf"'], PDF)),
      /^is required: the form has a part with an empty name \(name=""\)/,
    );
  });

  it('no name parameter', async () => {
    await expectFileError(
      form(rawPart(['Content-Disposition: form-data; filename="a.pdf"'], PDF)),
      /^is required: the form has a part with no name/,
    );
  });

  it('an unnamed part after the file', async () => {
    await expectFileError(
      form(
        rawPart(['Content-Disposition: form-data; name="file"; filename="a.pdf"'], PDF),
        rawPart(['Content-Disposition: form-data; name=""'], 'x'),
      ),
      /^must be the only part of the form; another part has an empty name/,
    );
  });

  it('the file part without a filename', async () => {
    await expectFileError(
      form(rawPart(['Content-Disposition: form-data; name="file"', 'Content-Type: application/pdf'], PDF)),
      /^must be a file part: its Content-Disposition has no filename/,
    );
  });

  it.each([
    [
      'a name every object has',
      ['Content-Disposition: form-data; name="constructor"; filename="a.pdf"'],
      PDF,
      'constructor',
    ],
    [
      'a JSON value that is not JSON',
      ['Content-Disposition: form-data; name="meta"', 'Content-Type: application/json'],
      '{not',
      'meta',
    ],
  ])('a part the plugin drops (%s) is named as a stray part', async (_label, headers, data, name) => {
    const response = await upload(form(rawPart(headers, data)));
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({
      file: ['is required as the only part of the form'],
      [name]: ['is not a known field'],
    });
  });
});

describe('the body as a whole', () => {
  it('no closing delimiter', async () => {
    const complete = fileForm(PDF);
    const response = await expectFileError(
      complete.subarray(0, complete.length - closingDelimiter().length),
      /the body ends before its closing delimiter/,
    );
    expect(response.body.detail).toMatch(/closing delimiter/);
  });

  it('cut in the middle of the file', async () => {
    const complete = fileForm(pdfBytes(100_000));
    await expectFileError(complete.subarray(0, 50_000), /the body ends before its closing delimiter/);
  });

  it('no delimiter of the declared boundary', async () => {
    await expectFileError(
      fileForm(PDF),
      /no line of the body is a delimiter of the boundary/,
      'multipart/form-data; boundary=other',
    );
  });

  it('no boundary parameter', async () => {
    await expectFileError(fileForm(PDF), /has no boundary parameter/, 'multipart/form-data');
  });

  it('an empty body', async () => {
    await expectFileError(Buffer.alloc(0), /^is required: the body is empty$/);
  });

  it('a form without parts', async () => {
    await expectFileError(closingDelimiter(), /^is required: the form has no parts$/);
  });
});

describe('bounded answers', () => {
  it('a huge part name is described by its length, and so is a huge Content-Disposition type', async () => {
    const name = 'n'.repeat(60_000);
    const stray = await upload(multipartBody([{ name, data: 'x' }]));
    expect(stray.status).toBe(422);
    expect(stray.body.errors).toEqual({
      file: [
        'is required: the form has a part with a name of 60000 characters, more than the 100 repeated, not repeated here; name the file part "file"',
      ],
    });
    expect(stray.text.length).toBeLessThan(2_000);

    const type = await upload(form(rawPart([`Content-Disposition: ${'t'.repeat(60_000)}; name="file"`], PDF)));
    expect(type.status).toBe(422);
    expect(type.body.errors.file).toEqual([
      'could not be read: part 1 of the form has a Content-Disposition type of 60000 characters, more than the 100 repeated, not form-data',
    ]);
    expect(type.body.detail.length).toBeLessThanOrEqual(MAX_DETAIL + 1);
    expect(type.text.length).toBeLessThan(2_000);
    // One of 100 characters is repeated whole.
    const hundred = await upload(form(rawPart([`Content-Disposition: ${'t'.repeat(100)}; name="file"`], PDF)));
    expect(hundred.body.errors.file).toEqual([
      `could not be read: part 1 of the form has Content-Disposition "${'t'.repeat(100)}", not form-data`,
    ]);
  });
});

describe('names with control or invisible characters', () => {
  it.each([
    ['U+0000 in the name', 'form-data; name="a\u0000b"', 'U+0000 at character 2'],
    ['an escape sequence in the name', 'form-data; name="\u001b[2Jx"', 'U+001B at character 1'],
    ['U+0000 in an encoded name', "form-data; name*=UTF-8''meta%00", 'U+0000 at character 5'],
    ['a right-to-left override in an encoded name', "form-data; name*=UTF-8''x%E2%80%AEfdp", 'U+202E at character 2'],
  ])('a stray part with %s is named by that character, the name not repeated', async (_label, disposition, at) => {
    for (const file of [false, true]) {
      const stray = rawPart([`Content-Disposition: ${disposition}`], 'x');
      const body = file
        ? form(rawPart(['Content-Disposition: form-data; name="file"; filename="a.pdf"'], PDF), stray)
        : form(stray);
      const response = await expectFileError(
        body,
        new RegExp(
          `${file ? 'another part has' : 'a part with'} a name holding a control or invisible character \\(${at.replace('+', '\\+')}\\), not repeated here`,
        ),
      );
      expect(response.body.detail).toBe('The request has an invalid field: file.');
      expect(response.text).not.toMatch(/\\u00|\\u202e|\u0000|\u001b|\u202e|fdp|meta/i);
    }
  });

  it('a Content-Disposition type with U+0000 or U+202E is named by that character, not repeated', async () => {
    const response = await expectFileError(
      form(rawPart(['Content-Disposition: form\u0000data; name="file"; filename="a.pdf"'], PDF)),
      /^could not be read: part 1 of the form has a Content-Disposition type holding a control or invisible character \(U\+0000 at character 5\), not form-data$/,
    );
    expect(response.text).not.toMatch(/\\u0000|\u0000/);
    // U+202E in UTF-8, read as the header's bytes are (one character each): its second byte is the C1 control U+0080.
    const override = await expectFileError(
      form(rawPart(['Content-Disposition: form\u202Edata; name="file"; filename="a.pdf"'], PDF)),
      /^could not be read: part 1 of the form has a Content-Disposition type holding a control or invisible character \(U\+0080 at character 6\), not form-data$/,
    );
    expect(override.text).not.toMatch(/\\u0080|\u0080|\u202e/i);
  });
});

describe('message attachments', () => {
  it('share the pipeline: 17 header fields are named there too', async () => {
    const m = await messageTenant(t);
    const message = await createMessage(t, m);
    const response = await t.http.post(`/api/v1/messages/${message.id}/file-attachment`, {
      token: m.token,
      body: form(
        rawPart(
          [
            ...Array.from({ length: 16 }, (_, index) => `X-Extra-${index}: x`),
            'Content-Disposition: form-data; name="file"; filename="a.pdf"',
          ],
          PDF,
        ),
      ),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expect(response.status).toBe(422);
    expect(response.body.errors.file[0]).toMatch(/more than 16 header fields/);
    expect((await uploadAttachment(t, m.token, message.id, PDF)).status).toBe(201);
  });
});
