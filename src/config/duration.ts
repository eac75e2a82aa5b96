/**
 * The one reader of durations in the configuration: a number followed by a unit letter (`ms`, `s`, `m`,
 * `h`, `d`), e.g. `500ms`, `5s`, `1.5h`, `3d`; a bare number is milliseconds. Words (`3 days`, `an hour`)
 * are refused rather than guessed at: one spelling per unit, and a typo stops the service instead of
 * becoming 0 (docs/decisions.md, "Configuration declared once").
 */
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 'ms') as keyof typeof UNIT_MS;
  return Math.round(Number(match[1]) * UNIT_MS[unit]);
}
