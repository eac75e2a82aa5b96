/**
 * svc import's rate and ETA: the pacer sends the first row at once, and the rate was rows done over time
 * elapsed, so one row answered in 125 ms showed 480/min and an ETA of 2 minutes for a 1,000-row file paced at
 * 30 a minute (33 minutes). Each row is counted with the interval the pace gives it.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressDisplay, type ProgressState } from '../../../packages/client/src/cli/import/display.js';

function shown(state: ProgressState): string {
  let text = '';
  const out = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  new ProgressDisplay(out, false).update(state, true);
  return text;
}

const base = { total: 1000, created: 0, rejected: 0, startedAt: 0, intervalMs: 2_000 };

describe('svc import progress', () => {
  it('after the first row, shows the pace and the ETA it gives, not the first answer’s speed', () => {
    const line = shown({ ...base, done: 1, created: 1, doneThisRun: 1, now: 125 });
    const rate = Number(/ ([\d.]+)\/min /.exec(line)?.[1]);
    expect(rate).toBeLessThanOrEqual(30);
    expect(rate).toBeGreaterThan(25);
    expect(line).toMatch(/ETA 3[2-9]m\d\ds\n$/);
  });

  it('at the pace, shows the pace', () => {
    // 100 rows: the first at 0, the 100th at 99 intervals, answered 125 ms later.
    const line = shown({ ...base, done: 100, created: 100, doneThisRun: 100, now: 99 * 2_000 + 125 });
    expect(line).toContain(' 30.0/min ETA 30m0');
  });

  it('writes the end once when the last row already wrote its line (plain output)', () => {
    let text = '';
    const out = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const display = new ProgressDisplay(out, false);
    const state = { ...base, total: 2, doneThisRun: 0, done: 0, now: 0 };
    display.update(state, true);
    display.update({ ...state, done: 1, created: 1, doneThisRun: 1, now: 2_000 });
    display.update({ ...state, done: 2, created: 2, doneThisRun: 2, now: 4_000 });
    display.update({ ...state, done: 2, created: 2, doneThisRun: 2, now: 4_100 }, true);
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => /^progress (\d+)\/2/.exec(line)?.[1]),
    ).toEqual(['0', '1', '2']);
  });
});
