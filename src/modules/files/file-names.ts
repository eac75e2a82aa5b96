/** File names: cleaning what a client sends before it is stored, and quoting it for a download. */

const MAX_NAME_LENGTH = 200;
const MAX_EXTENSION_LENGTH = 16;

/** C0 and C1 control characters, DEL, and the invisible bidirectional controls used to disguise names. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The name a file is stored and served under: the last path segment of what the client sent (either
 * separator), without control characters, NFC-normalised, at most 200 characters (the extension is
 * kept when the stem is shortened). `fallback` when nothing usable is left.
 */
export function sanitizeFileName(raw: string | undefined, fallback: string): string {
  const segments = (raw ?? '').split(/[/\\]/);
  const name = (segments[segments.length - 1] ?? '').replace(UNSAFE_CHARACTERS, '').normalize('NFC').trim();
  if (name === '' || /^\.+$/.test(name)) return fallback;
  const characters = Array.from(name);
  if (characters.length <= MAX_NAME_LENGTH) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? Array.from(name.slice(dot)) : [];
  if (extension.length === 0 || extension.length > MAX_EXTENSION_LENGTH)
    return characters.slice(0, MAX_NAME_LENGTH).join('');
  const stem = Array.from(name.slice(0, dot)).slice(0, MAX_NAME_LENGTH - extension.length);
  return `${stem.join('')}${extension.join('')}`;
}

/** RFC 5987 value characters need no escaping; encodeURIComponent leaves a few others that do. */
function encodeExtValue(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): an ASCII `filename` for old clients and
 * the exact name as UTF-8 in `filename*`.
 */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeExtValue(fileName)}`;
}
