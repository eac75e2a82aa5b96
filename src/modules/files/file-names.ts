/**
 * File names: the name a file is stored and served under, made from what the client sent so that it can
 * neither hide characters nor claim another type than the one its bytes were found to be; and the
 * Content-Disposition header that carries it to a download.
 */
import { create as contentDisposition } from 'content-disposition';

const MAX_NAME_LENGTH = 200;

/**
 * The types a stored file can have (those the uploads accept) and the extensions a name of that type may
 * end in, case aside; the first is the one given to a name that has none of them.
 */
const EXTENSIONS_BY_TYPE = {
  'application/pdf': ['pdf'],
  'image/png': ['png'],
  'image/jpeg': ['jpg', 'jpeg', 'jpe', 'jfif'],
} as const satisfies Record<string, readonly [string, ...string[]]>;

/** A media type that stored files can have, and so that names can be made for. */
export type NamedFileType = keyof typeof EXTENSIONS_BY_TYPE;

/** The extensions of a type, the preferred first; undefined for a type no upload accepts. */
export function extensionsOf(mime: string): readonly [string, ...string[]] | undefined {
  return Object.hasOwn(EXTENSIONS_BY_TYPE, mime) ? EXTENSIONS_BY_TYPE[mime as NamedFileType] : undefined;
}

/**
 * C0 and C1 control characters, DEL, the invisible bidirectional formatting characters (LRM, RLM, ALM,
 * the embeddings, overrides and isolates) that make `invoice\u202Efdp.exe` display as `invoiceexe.pdf`,
 * and lone surrogates (not text: no header could carry them).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
export const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cs}]/gu;

/**
 * What follows a name's last dot when it is an extension: up to 16 letters, digits, `_`, `-`, `+`, `~` or
 * `$`, at least one of them a letter. Any such suffix is taken for a type's claim (operating systems map
 * far more extensions than any list holds); `v1.2` or `Dr. Smith` have none.
 */
const EXTENSION = /^(?=.*\p{L})[\p{L}\p{N}_+~$-]{1,16}$/u;

/** A dot or a white space character (`\s`, all of them in the BMP, so one code unit each). */
const DOT_OR_SPACE = /^[.\s]$/u;

/**
 * `text` without its trailing dots and spaces, which Windows drops when it saves a file, so that they hide
 * nothing either. Walked back from the end: the pattern `/[.\s]+$/` is tried from every dot or space of a run
 * and reads the run to its end each time, quadratic in the run's length (a name of 70,000 dots between two
 * letters, which a multipart header block holds, took seconds).
 */
function withoutTrailingDotsAndSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && DOT_OR_SPACE.test(text[end - 1]!)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** The last path segment (either separator) without unsafe characters, NFC, trimmed. */
function cleaned(raw: string): string {
  const segments = raw.split(/[/\\]/);
  const name = (segments[segments.length - 1] ?? '').replace(UNSAFE_CHARACTERS, '').normalize('NFC').trim();
  return withoutTrailingDotsAndSpaces(name);
}

/**
 * The file name of a multipart part as its sender meant it. Browsers (the HTML standard's multipart/form-data
 * encoding), curl and Node's FormData, the client package's, cannot put `"`, CR or LF in the quoted
 * `filename`, and send them as `%22`, `%0D` and `%0A`; nothing undoes that on the way in, so `say "hi".pdf`
 * was stored as `say %22hi%22.pdf`. Only those three are decoded (any other `%` is the name's own); CR and
 * LF are then removed as control characters.
 */
export function formFileName(sent: string | undefined): string | undefined {
  return sent?.replace(/%(22|0D|0A)/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The name's stem and its extension (without the dot), when it has one. */
function splitExtension(name: string): { stem: string; extension?: string } {
  const dot = name.lastIndexOf('.');
  const extension = name.slice(dot + 1);
  return dot >= 0 && EXTENSION.test(extension) ? { stem: name.slice(0, dot), extension } : { stem: name };
}

/** At most `length` characters (code points, so that no surrogate pair is cut), trailing dots and spaces removed. */
function shortened(text: string, length: number): string {
  const characters = Array.from(text);
  if (characters.length <= length) return text;
  return withoutTrailingDotsAndSpaces(characters.slice(0, length).join(''));
}

/**
 * The name a file of type `mime` is stored and served under, from the name the client sent: its last
 * path segment without control or bidirectional characters, NFC, ending in an extension of the type: one
 * of another type is replaced (`poly.html` → `poly.pdf`), a missing one appended (`scan` → `scan.pdf`);
 * `label.pdf.exe` becomes `label.pdf`. At most 200 characters, the extension kept when the stem is cut.
 * `defaultBaseName` stands for a stem when nothing usable is left (`..`, `.pdf`). Applying it to its own
 * result changes nothing, so that a download can apply it again to names stored before it existed.
 * A type no upload accepts (not expected) keeps the cleaned name as it is.
 */
export function safeFileName(raw: string | undefined, mime: string, defaultBaseName: string): string {
  const name = cleaned(raw ?? '');
  const extensions = extensionsOf(mime);
  if (extensions === undefined) return shortened(name, MAX_NAME_LENGTH) || defaultBaseName;
  const isTheType = (extension: string | undefined) =>
    extension !== undefined && (extensions as readonly string[]).includes(extension.toLowerCase());
  let { stem, extension } = splitExtension(name);
  if (!isTheType(extension)) {
    const inner = splitExtension(stem);
    ({ stem, extension } = isTheType(inner.extension) ? inner : { stem, extension: extensions[0] });
  }
  const ext = extension ?? extensions[0];
  stem = shortened(withoutTrailingDotsAndSpaces(stem), MAX_NAME_LENGTH - ext.length - 1);
  return `${stem || defaultBaseName}.${ext}`;
}

/**
 * The ASCII stand-in for old clients: compatibility forms decomposed and accents dropped (`É` → `E`), then
 * any other character outside printable ASCII, the `"`, `\` and `%` that some clients unquote or
 * percent-decode, and the `/` a full-width solidus decomposes to, replaced by `_`.
 */
function asciiFallback(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]|["\\%/]/g, '_');
}

/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): `filename` in ASCII, and when that is not
 * the exact name, the exact name as UTF-8 in `filename*` (RFC 8187), which current browsers prefer.
 */
export function attachmentDisposition(fileName: string): string {
  return contentDisposition(fileName, { type: 'attachment', fallback: asciiFallback(fileName) });
}
