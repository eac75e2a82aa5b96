/** What an attempt's verdict makes of its delivery: done, failed for good, or due again after a wait. */
import type { WebhookConfig } from '../../config.js';
import type { Verdict } from './attempt-verdict.js';
import type { AttemptOutcome } from './repository/attempts.js';

const JITTER = 0.2;

/** The schedule's wait after this attempt of a round (its entry, the last one repeating), before the jitter. */
export function scheduledDelayMs(schedule: readonly number[], attemptInRound: number): number {
  if (schedule.length === 0) return 0;
  return schedule[Math.min(attemptInRound - 1, schedule.length - 1)]!;
}

/** The wait before the next attempt of a round: the schedule's (scheduledDelayMs), ±20%. */
export function retryDelayMs(schedule: readonly number[], attemptInRound: number, random: () => number): number {
  const base = scheduledDelayMs(schedule, attemptInRound);
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
