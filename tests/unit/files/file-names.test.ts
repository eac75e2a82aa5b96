import { parse } from 'content-disposition';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachmentDisposition, safeFileName } from '../../../src/modules/files/file-names.js';

const PDF = 'application/pdf';
const JPEG = 'image/jpeg';
const PNG = 'image/png';

/** Everything removed from names: controls, DEL, C1, and the bidirectional formatting characters. */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('safeFileName', () => {
  it.each([
    // The type's own extension is kept, in any case.
    ['label.pdf', PDF, 'label.pdf'],
    ['LABEL.PDF', PDF, 'LABEL.PDF'],
    ['photo.jpeg', JPEG, 'photo.jpeg'],
    ['photo.JPG', JPEG, 'photo.JPG'],
    // Another type's extension is replaced by the detected type's.
    ['poly.html', PDF, 'poly.pdf'],
    ['scan.png', PDF, 'scan.pdf'],
    ['photo.pdf', JPEG, 'photo.jpg'],
    ['x.svg', PNG, 'x.png'],
    ['archive.tar.gz', PDF, 'archive.tar.pdf'],
    ['notes.final', PDF, 'notes.pdf'],
    // A name that already carried the type's extension before another one keeps it once.
    ['label.pdf.exe', PDF, 'label.pdf'],
    ['label.PDF.html', PDF, 'label.PDF'],
    // A missing extension is appended; what follows a dot is no extension without a letter, or with a space.
    ['scan', PDF, 'scan.pdf'],
    ['v1.2', PDF, 'v1.2.pdf'],
    ['Dr. Smith', PDF, 'Dr. Smith.pdf'],
    ['report.final draft', PDF, 'report.final draft.pdf'],
    // Control and bidirectional characters are removed, then the extension is judged.
    ['invoice\u202efdp.exe', PDF, 'invoicefdp.pdf'],
    ['invoice\u202egnp.pdf', PNG, 'invoicegnp.png'],
    ['a\u2066b\u2067c\u2068d\u2069e\u202af\u202bg\u202ch\u202di\u200ej\u200fk\u061cl.pdf', PDF, 'abcdefghijkl.pdf'],
    ['lab\u0007el\u0000\r\n\u007f\u0085.pdf', PDF, 'label.pdf'],
    ['a\ud800b.pdf', PDF, 'ab.pdf'],
    // Paths, trailing dots and spaces (dropped by Windows), names that are only an extension.
    ['C:\\Users\\me\\Desktop\\label.pdf', PDF, 'label.pdf'],
    ['../../etc/passwd', PDF, 'passwd.pdf'],
    ['poly.html. . ', PDF, 'poly.pdf'],
    ['label.pdf.', PDF, 'label.pdf'],
    // White space of any kind counts (\s): a no-break space, an ideographic space, a line separator.
    ['notes.txt.\u00a0.\u3000\u2028', PDF, 'notes.pdf'],
    ['a\u3000.\u00a0b.pdf', PDF, 'a\u3000.\u00a0b.pdf'],
    ['poly..html', PDF, 'poly.pdf'],
    ['.pdf', PDF, 'return-label.pdf'],
    ['.htaccess', PDF, 'return-label.pdf'],
    ['..', PDF, 'return-label.pdf'],
    ['   ', PDF, 'return-label.pdf'],
    ['\u202e', PDF, 'return-label.pdf'],
    [undefined, JPEG, 'return-label.jpg'],
    // Normalised to NFC; non-ASCII kept.
    ['E\u0301tiquette.pdf', PDF, '\u00c9tiquette.pdf'],
    ['Счёт №5.html', PDF, 'Счёт №5.pdf'],
  ])('makes %j of type %s into %j', (raw, mime, expected) => {
    expect(safeFileName(raw, mime, 'return-label')).toBe(expected);
  });

  it('cuts long names to 200 characters, keeping the extension and never half a surrogate pair', () => {
    expect(safeFileName(`${'n'.repeat(300)}.pdf`, PDF, 'x')).toBe(`${'n'.repeat(196)}.pdf`);
    expect(safeFileName(`${'n'.repeat(300)}.exe`, PDF, 'x')).toBe(`${'n'.repeat(196)}.pdf`);
    const emoji = safeFileName('😀'.repeat(300), PNG, 'x');
    expect(Array.from(emoji)).toHaveLength(200);
    expect(emoji).toBe(`${'😀'.repeat(196)}.png`);
  });

  it('keeps the cleaned name of a type no upload accepts', () => {
    expect(safeFileName('a\u202eb.html', 'text/html', 'file')).toBe('ab.html');
    expect(safeFileName('', 'text/html', 'file')).toBe('file');
  });

  it('always ends in the type, hides nothing and changes nothing when applied again', () => {
    const pieces = fc.constantFrom(
      'a',
      'Z',
      '1',
      '.',
      ' ',
      '/',
      '\\',
      'pdf',
      'html',
      'exe',
      'é',
      'e\u0301',
      '😀',
      '\u202e',
      '\u2066',
      '\u061c',
      '\u0000',
      '\n',
      '\ud800',
      '"',
      '%',
    );
    const names = fc.oneof(
      fc.array(pieces, { maxLength: 40 }).map((parts) => parts.join('')),
      fc.string(),
    );
    fc.assert(
      fc.property(names, fc.constantFrom(PDF, PNG, JPEG), (raw, mime) => {
        const name = safeFileName(raw, mime, 'attachment');
        const extensions = { [PDF]: ['pdf'], [PNG]: ['png'], [JPEG]: ['jpg', 'jpeg', 'jpe', 'jfif'] }[mime]!;
        expect(extensions).toContain(name.slice(name.lastIndexOf('.') + 1).toLowerCase());
        expect(name).not.toMatch(HIDDEN);
        expect(name).not.toMatch(/[/\\]/);
        expect(name).not.toMatch(/\p{Cs}/u);
        expect(Array.from(name).length).toBeLessThanOrEqual(200);
        expect(safeFileName(name, mime, 'attachment')).toBe(name);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('attachmentDisposition', () => {
  it('names an ASCII file with filename alone', () => {
    expect(attachmentDisposition('label.pdf')).toBe('attachment; filename=label.pdf');
    expect(attachmentDisposition('my label (2).pdf')).toBe('attachment; filename="my label (2).pdf"');
  });

  it('adds the exact name as UTF-8 in filename* when the ASCII fallback differs from it', () => {
    expect(attachmentDisposition('Étiquette n°1 (copie) 100%.pdf')).toBe(
      `attachment; filename="Etiquette n_1 (copie) 100_.pdf"; filename*=UTF-8''%C3%89tiquette%20n%C2%B01%20%28copie%29%20100%25.pdf`,
    );
    expect(attachmentDisposition('Счёт.pdf')).toBe(
      `attachment; filename=____.pdf; filename*=UTF-8''%D0%A1%D1%87%D1%91%D1%82.pdf`,
    );
  });

  it('never puts a quote, backslash or slash in the fallback, and keeps them exactly in filename*', () => {
    expect(attachmentDisposition('a\uff0fb\uff02.pdf')).toBe(
      `attachment; filename=a_b_.pdf; filename*=UTF-8''a%EF%BC%8Fb%EF%BC%82.pdf`,
    );
    const header = attachmentDisposition('say "hi" \\ bye.pdf');
    expect(header).toBe(`attachment; filename="say _hi_ _ bye.pdf"; filename*=UTF-8''say%20%22hi%22%20%5C%20bye.pdf`);
    expect(parse(header).parameters.filename).toBe('say "hi" \\ bye.pdf');
  });

  it('gives a header that parses back to the exact name, with a printable ASCII fallback', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1 }), fc.constantFrom(PDF, PNG, JPEG), (raw, mime) => {
        const name = safeFileName(raw, mime, 'attachment');
        const header = attachmentDisposition(name);
        expect(header).toMatch(/^[\x20-\x7e]+$/);
        const parsed = parse(header);
        expect(parsed.type).toBe('attachment');
        expect(parsed.parameters.filename).toBe(name);
        expect(parse(header, { extended: false }).parameters.filename).not.toMatch(/["\\%/]/);
      }),
      { numRuns: 2000 },
    );
  });
});
