/**
 * The query string (and form body) parser. Fastify's default (fast-querystring) keeps a component whose
 * percent-encoding is not UTF-8 as the raw text (`%ED%A0%80` stays those nine characters), and other
 * decoders make it U+FFFD: either way a value that is not text would be accepted as some other text.
 * Here each byte that is not part of valid UTF-8 becomes a lone surrogate (U+DC80 to U+DCFF, Python's
 * "surrogateescape"), which the validators refuse (request-values.ts) naming the parameter, as they do
 * lone surrogates in a JSON body. Otherwise the same rules: `+` is a space, a repeated name gives an
 * array, a name without `=` has the empty value, a `%` not followed by two hex digits is kept as it is.
 */

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The longest UTF-8 sequence a lead byte announces (1 for ASCII), 0 for a byte that cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** UTF-8 bytes to text, each byte outside a valid sequence as U+DC00 + byte. */
function decodeEscapingInvalid(bytes: Uint8Array): string {
  let text = '';
  let index = 0;
  while (index < bytes.length) {
    const length = sequenceLength(bytes[index]!);
    if (length > 0 && index + length <= bytes.length) {
      try {
        // The strict decoder refuses overlong forms, encoded surrogates and code points beyond U+10FFFF.
        text += strictUtf8.decode(bytes.subarray(index, index + length));
        index += length;
        continue;
      } catch {
        // Not a valid sequence: this lead byte alone is escaped, and decoding resumes after it.
      }
    }
    text += String.fromCharCode(0xdc00 + bytes[index]!);
    index += 1;
  }
  return text;
}

const PERCENT_RUNS = /(?:%[0-9a-f]{2})+/gi;

function decodeComponent(component: string): string {
  const spaced = component.includes('+') ? component.replace(/\+/g, ' ') : component;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Malformed: decode each run of escapes on its own, keeping stray `%` and marking bytes that are not UTF-8.
    return spaced.replace(PERCENT_RUNS, (run) =>
      decodeEscapingInvalid(Uint8Array.from(run.slice(1).split('%'), (hex) => Number.parseInt(hex, 16))),
    );
  }
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
