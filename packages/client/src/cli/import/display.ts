/**
 * What an import shows while it runs: on a terminal a progress bar redrawn in place (rows, created,
 * rejected, rate and ETA); otherwise plain lines, about one per percent and at least every 10 seconds.
 */
import type { Writable } from 'node:stream';

export interface ProgressState {
  total: number;
  /** Rows settled (created now or before, or rejected). */
  done: number;
  created: number;
  rejected: number;
  /** Rows this run sent at the pace and the time it started (for the rate). */
  doneThisRun: number;
  startedAt: number;
  now: number;
  /** The pace's interval between two sends (60 s / --rate). */
  intervalMs: number;
}

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

function rateAndEta(state: ProgressState): { rate: string; eta: string } {
  // The pacer sends the first row at once, so rows done over time elapsed counted that row free: 480/min and
  // an ETA of 2 minutes after the first row of a 1,000-row file at 30 a minute. Each row takes one interval.
  const minutes = (state.now - state.startedAt + state.intervalMs) / 60_000;
  if (state.doneThisRun === 0 || minutes <= 0) return { rate: '-', eta: '-' };
  const perMinute = state.doneThisRun / minutes;
  return {
    rate: `${perMinute.toFixed(1)}/min`,
    eta: formatDuration(((state.total - state.done) / perMinute) * 60_000),
  };
}

export class ProgressDisplay {
  private lastLineAt = 0;
  private lastPercent = -1;
  private lastDone = -1;

  constructor(
    private readonly out: Writable,
    private readonly tty: boolean,
  ) {}

  update(state: ProgressState, force = false): void {
    const percent = state.total === 0 ? 100 : Math.floor((state.done / state.total) * 100);
    const { rate, eta } = rateAndEta(state);
    const counts = `${state.done}/${state.total} (${percent}%) created ${state.created} rejected ${state.rejected} ${rate} ETA ${eta}`;
    if (this.tty) {
      const width = 24;
      const filled = Math.round((percent / 100) * width);
      this.out.write(`\r\x1b[2K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${counts}`);
      return;
    }
    // A forced line (the start, the end) is written unless the last line already said as much: the last row's
    // line and the end's were the same line twice.
    const news = force ? state.done !== this.lastDone : percent !== this.lastPercent;
    if (news || state.now - this.lastLineAt >= 10_000) {
      this.out.write(`progress ${counts}\n`);
      this.lastPercent = percent;
      this.lastDone = state.done;
      this.lastLineAt = state.now;
    }
  }

  /** A line of its own (a rejected row, a retry), not overwritten by the bar. */
  note(text: string): void {
    this.out.write(this.tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
  }

  finish(): void {
    if (this.tty) this.out.write('\n');
  }
}
