/**
 * JSON with object keys sorted and undefined members left out, so that the same payload always reads the same.
 * Written as loops over the keys: every keyed create hashes its body's canonical text, and a stored key's
 * hash must come out the same across releases (tests/unit/lib/canonical-json.test.ts compares it with the
 * first release's `Object.entries`, `sort` and `join`).
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) text += (index > 0 ? ',' : '') + canonicalJson(value[index]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, as `<` does: the order does not depend on the locale.
  const names = Object.keys(object).sort();
  let text = '{';
  for (const name of names) {
    const member = object[name];
    if (member === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(name)}:${canonicalJson(member)}`;
  }
  return `${text}}`;
}
