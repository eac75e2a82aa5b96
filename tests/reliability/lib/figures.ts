/**
 * Figures of the reliability suites. Each suite reports one line (`ssrf: 64/64 rejected, …`); the runner
 * (tests/reliability/run.ts) collects them from RELIABILITY_FIGURES_DIR, prints them and keeps them in
 * docs/reliability.md. Run directly with vitest, a suite prints its line instead.
 *
 * RELIABILITY_FULL=1 selects the full counts of the issue (1,000 events, 20 kill runs, more fuzz runs);
 * the default is the lighter CI counts, so that the whole run stays within its CI budget.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export const FULL = process.env.RELIABILITY_FULL === '1';

/** The count for this run: `ci` by default, `full` with RELIABILITY_FULL=1. */
export function scaled(ci: number, full: number): number {
  return FULL ? full : ci;
}

export function reportFigure(suite: string, figures: string): void {
  const line = `${suite}: ${figures}`;
  const directory = process.env.RELIABILITY_FIGURES_DIR;
  if (directory) writeFileSync(path.join(directory, `${suite}.txt`), `${line}\n`);
  else console.log(line);
}
