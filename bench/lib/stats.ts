/** Small statistics and formatting helpers of the bench. */
import type { RoundResult } from '../load.js';

/** The p-th percentile (nearest rank) of sorted values; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/**
 * Several rounds as one figure: throughput is the mean of the rounds (spread kept as min..max), p50 the
 * median of the rounds' p50, p99 and max the worst round's (conservative).
 */
export interface Summary {
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  failures: number;
  rounds: RoundResult[];
}

export function summarise(rounds: RoundResult[]): Summary {
  const rps = rounds.map((round) => round.rps);
  return {
    rps: rps.reduce((sum, value) => sum + value, 0) / rps.length,
    rpsMin: Math.min(...rps),
    rpsMax: Math.max(...rps),
    p50: median(rounds.map((round) => round.p50)),
    p99: Math.max(...rounds.map((round) => round.p99)),
    max: Math.max(...rounds.map((round) => round.max)),
    requests: rounds.reduce((sum, round) => sum + round.requests, 0),
    failures: rounds.reduce((sum, round) => sum + round.non2xx + round.errors + round.timeouts, 0),
    rounds,
  };
}

export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ms(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}
