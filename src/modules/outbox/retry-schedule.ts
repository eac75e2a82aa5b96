/** What an attempt's verdict makes of its delivery: done, failed for good, or due again after a wait. */
import type { WebhookConfig } from '../../config.js';
import type { Verdict } from './attempt-verdict.js';
import type { AttemptOutcome } from './repository/attempts.js';

const JITTER = 0.2;

/** The wait before the next attempt of a round, ±20%: the schedule's entry for this attempt, the last one repeating. */
export function retryDelayMs(schedule: readonly number[], attemptInRound: number, random: () => number): number {
  if (schedule.length === 0) return 0;
  const base = schedule[Math.min(attemptInRound - 1, schedule.length - 1)]!;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}

/**
 * A success ends the delivery; a failure verdict, or a retry once the round's attempt budget is spent,
 * fails it terminally; any other retry is due again after the schedule's wait.
 */
export function outcomeOf(
  verdict: Verdict,
  attemptInRound: number,
  config: Pick<WebhookConfig, 'maxAttempts' | 'retryScheduleMs'>,
  now: Date,
  random: () => number,
): AttemptOutcome {
  if (verdict.outcome === 'succeeded') return { status: 'succeeded' };
  if (verdict.outcome === 'failed' || attemptInRound >= config.maxAttempts) return { status: 'failed' };
  return {
    status: 'pending',
    nextAttemptAt: new Date(now.getTime() + retryDelayMs(config.retryScheduleMs, attemptInRound, random)),
  };
}
