/**
 * The one rule for a name that comes from the request and that a problem refers to: a body member's, a
 * query parameter's, a header's, a multipart part's, a path or an id taken from it. A printable name of at
 * most `MAX_NAME` characters is repeated as it is. Any other is described instead: its first character that
 * does not show (or shows as something it is not) as `U+202E at character 2`, else its length. So a problem
 * carries none of the request's control, bidi or invisible characters, escaped or not (an operator's log
 * viewer or an integrator's terminal would act on them, or show `invoice\u202Efdp.exe` as `invoiceexe.pdf`), and
 * its size does not grow with the names sent. A value the request chose (a host, a code) that a problem repeats
 * follows it too (`valueOrWhy`). docs/decisions.md has the why.
 */

/** The longest name repeated, in characters (code points). */
export const MAX_NAME = 100;

/**
 * What a repeated name may not hold: controls (Cc: C0, DEL, C1), format characters (Cf: the bidi marks,
 * embeddings, overrides and isolates, zero-width spaces and joiners, the byte-order mark, soft hyphen), lone
 * surrogates (not text), line and paragraph separators, the code points Unicode says to ignore in rendering
 * (variation selectors, Hangul fillers), and white space other than the space, which looks like a space and
 * is not one.
 */
const NOT_SHOWN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|(?! )\p{White_Space}/u;

/**
 * The first character of `text` that `pattern` matches, named rather than repeated (`U+0000 at character 3`,
 * counting from 1 in code points), or undefined where none does: how a problem points at a control or
 * invisible character of the request without carrying it.
 */
export function characterNamed(text: string, pattern: RegExp): string | undefined {
  const index = text.search(pattern);
  if (index < 0) return undefined;
  const codePoint = text.codePointAt(index)!.toString(16).toUpperCase().padStart(4, '0');
  return `U+${codePoint} at character ${codePoints(text.slice(0, index)) + 1}`;
}

/** The length of `text` in characters (code points), as its sender counts them. */
function codePoints(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    count++;
  }
  return count;
}

/**
 * Why `name` is not repeated, as the end of a phrase about it (`holding a control or invisible character
 * (U+202E at character 2)`, `of 10000 characters, more than the 100 repeated`), or undefined when it is.
 */
export function whyNotShown(name: string): string | undefined {
  const character = characterNamed(name, NOT_SHOWN);
  if (character !== undefined) return `holding a control or invisible character (${character})`;
  // Only a name longer than the bound in code units can be longer in code points.
  if (name.length <= MAX_NAME) return undefined;
  const length = codePoints(name);
  return length > MAX_NAME ? `of ${length} characters, more than the ${MAX_NAME} repeated` : undefined;
}

/**
 * `name` as a problem's text repeats it (JSON-quoted when `quoted`), or `noun` and why it is not, as in
 * `a path of 15008 characters, more than the 100 repeated`.
 */
export function nameOrWhy(name: string, noun: string, quoted = false): string {
  const why = whyNotShown(name);
  if (why !== undefined) return `${noun} ${why}`;
  return quoted ? JSON.stringify(name) : name;
}

/**
 * A value of the request (a host, a scheme, a code a duplicate or a 404 repeats) as the subject of a problem's
 * sentence, by the same rule: itself (JSON-quoted when `quoted`), or `noun (why)`, as in `the URL's host (of 253
 * characters, more than the 100 repeated)`. Never cut, never escaped.
 */
export function valueOrWhy(value: string, noun: string, quoted = false): string {
  const why = whyNotShown(value);
  if (why !== undefined) return `${noun} (${why})`;
  return quoted ? JSON.stringify(value) : value;
}
