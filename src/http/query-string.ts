/**
 * The query string (and form body) parser. Fastify's default (fast-querystring) keeps a component whose
 * percent-encoding is not UTF-8 as the raw text (`%ED%A0%80` stays those nine characters), and other
 * decoders make it U+FFFD: either way a value that is not text would be accepted as some other text.
 * Here each byte that is not part of valid UTF-8 becomes a lone surrogate (U+DC80 to U+DCFF, Python's
 * "surrogateescape"), which the validators refuse (request-values.ts) naming the parameter, as they do
 * lone surrogates in a JSON body. Otherwise the same rules: `+` is a space, a repeated name gives an
 * array, a name without `=` has the empty value, a `%` not followed by two hex digits is kept as it is.
 */

const utf8 = new TextDecoder('utf-8');

/**
 * The length of the valid UTF-8 sequence at `index`, or 0 where none starts (RFC 3629's table: no overlong
 * form, no encoded surrogate, nothing past U+10FFFF). Checked here rather than by a fatal decoder's exception
 * per byte: a query of 2,600 `%C3%28` threw 2,600 times, 12 ms of the event loop for one request.
 */
function validSequence(bytes: Uint8Array, index: number): number {
  const lead = bytes[index]!;
  if (lead < 0x80) return 1;
  const length =
    lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length === 0 || index + length > bytes.length) return 0;
  const second = bytes[index + 1]!;
  const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  if (second < low || second > high) return 0;
  for (let next = index + 2; next < index + length; next++) if ((bytes[next]! & 0xc0) !== 0x80) return 0;
  return length;
}

/** UTF-8 bytes to text, each byte outside a valid sequence as U+DC00 + byte. */
function decodeEscapingInvalid(bytes: Uint8Array): string {
  let text = '';
  let start = 0;
  let index = 0;
  while (index < bytes.length) {
    const length = validSequence(bytes, index);
    if (length > 0) {
      index += length;
      continue;
    }
    // The valid run before this byte in one decode, then the byte escaped; decoding resumes after it.
    if (index > start) text += utf8.decode(bytes.subarray(start, index));
    text += String.fromCharCode(0xdc00 + bytes[index]!);
    index += 1;
    start = index;
  }
  return index > start ? text + utf8.decode(bytes.subarray(start, index)) : text;
}

const PERCENT_RUNS = /(?:%[0-9a-f]{2})+/gi;

/** The bytes of a run of escapes, `%C3%A9` → [0xc3, 0xa9]. */
function escapedBytes(run: string): Uint8Array {
  const bytes = new Uint8Array(run.length / 3);
  for (let index = 0; index < bytes.length; index++)
    bytes[index] = Number.parseInt(run.slice(3 * index + 1, 3 * index + 3), 16);
  return bytes;
}

/**
 * Each run of escapes decoded as UTF-8, stray `%` kept. The same text as decodeURIComponent where that
 * succeeds, without its exception where it does not (a query of 2,600 `a=%FF` threw 2,600 times, 7 ms).
 */
function decodeComponent(component: string): string {
  const spaced = component.includes('+') ? component.replace(/\+/g, ' ') : component;
  if (!spaced.includes('%')) return spaced;
  return spaced.replace(PERCENT_RUNS, (run) => decodeEscapingInvalid(escapedBytes(run)));
}

/** Parses `a=1&b=x+y&a=2` into `{a: ['1', '2'], b: 'x y'}` (an object without a prototype). */
export function parseQueryString(input: string): Record<string, string | string[]> {
  const result = Object.create(null) as Record<string, string | string[]>;
  for (const pair of input.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decodeComponent(equals < 0 ? pair : pair.slice(0, equals));
    const value = equals < 0 ? '' : decodeComponent(pair.slice(equals + 1));
    const existing = result[name];
    if (existing === undefined) result[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else result[name] = [existing, value];
  }
  return result;
}
