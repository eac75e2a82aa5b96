/**
 * Whether a text shows anything. A name made only of white space, or of characters that render as nothing
 * (bidi controls such as U+202E, zero-width spaces and joiners, the byte-order mark, variation selectors,
 * Hangul fillers), passes a length check yet names nothing an operator can read or tell apart in a list.
 * Unicode's own classes decide: White_Space, controls (Cc), format characters (Cf) and the code points it
 * says to ignore in rendering (Default_Ignorable_Code_Point). Such characters inside a real name (a ZWNJ in a
 * Persian word, a bidi mark between scripts) are kept: only a text of nothing else is blank.
 */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
const WHITE_SPACE = /\p{White_Space}+/gu;

export function isBlank(text: string): boolean {
  return INVISIBLE_ONLY.test(text);
}

/**
 * The text as a reader sees it, for telling whether two texts look the same: characters that render as
 * nothing dropped, each run of white space one space, none at either end, lower case.
 */
export function seenAs(text: string): string {
  return text.replace(INVISIBLE, '').replace(WHITE_SPACE, ' ').trim().toLowerCase();
}
