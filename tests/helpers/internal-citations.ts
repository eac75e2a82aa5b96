/**
 * Citations of what only the project has: its specification ("SPEC Retry rules 4"), docs/decisions.md
 * ("DECISIONS Uploads") and its issue tracker ("issue 18"). Integrators have the client package, the OpenAPI
 * document and the docs pages, never those, so text they read states the rule itself or points to the API
 * reference (/docs) or a problem page (/problems/<slug>).
 */
const CITATIONS = [
  /\bSPEC\b/,
  /\bDECISIONS\b/,
  /decisions\.md/i,
  /\bthe specification\b/i,
  /\bissues? #?\d+/i,
  // "Retry rules 2", "rule 7": the numbered rules of the specification.
  /\brules? \d/i,
];

/** The lines of `text` that cite an internal document, each with its line number. */
export function internalCitations(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) =>
      CITATIONS.some((citation) => citation.test(line)) ? [`line ${index + 1}: ${line.trim()}`] : [],
    );
}

/** Every string of a JSON value (an OpenAPI document), with the path to it, that cites an internal document. */
export function internalCitationsIn(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return internalCitations(value).map((line) => `${at} ${line}`);
  if (Array.isArray(value)) return value.flatMap((item, index) => internalCitationsIn(item, `${at}/${index}`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => internalCitationsIn(item, `${at}/${key}`));
  return [];
}
