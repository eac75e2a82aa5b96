/** The word someone most likely meant, for svc's messages about a mistyped command, option or field. */

/** Edits (insertions, deletions, substitutions) between two short words. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/** The same word written another way: case, `_`, `-` and spaces aside (`site_code` is `siteCode`). */
const squeezed = (word: string) => word.toLowerCase().replace(/[_\-\s]/g, '');

/** The known word a mistyped one most likely meant (written another way, begun, or within two edits). */
export function closest(word: string, known: readonly string[]): string | undefined {
  return (
    known.find((candidate) => squeezed(candidate) === squeezed(word)) ??
    known.find((candidate) => candidate.startsWith(word)) ??
    known.find((candidate) => distance(word, candidate) <= 2)
  );
}
