/** What an attempt's verdict makes of its delivery: done, failed for good, or due again after a wait. */
import type { WebhookConfig } from '../../config.js';
import type { Verdict } from './attempt-verdict.js';
import type { AttemptOutcome } from './repository/attempts.js';

const JITTER = 0.2;

/** The schedule's wait after this attempt of a round (its entry, the last one repeating), before the jitter. */
function scheduledDelayMs(schedule: readonly number[], attemptInRound: number): number {
  if (schedule.length === 0) return 0;
  return schedule[Math.min(attemptInRound - 1, schedule.length - 1)]!;
}

/** `base` ±20%. */
function jittered(base: number, random: () => number): number {
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}

/** The wait before the next attempt of a round: the schedule's (scheduledDelayMs), ±20%. */
export function retryDelayMs(schedule: readonly number[], attemptInRound: number, random: () => number): number {
  return jittered(scheduledDelayMs(schedule, attemptInRound), random);
}

/**
 * The schedule's wait before a failed attempt is tried again, before the jitter; undefined when it was the last of
 * its round's budget (maxAttempts), so that no retry follows. The worker's rule (outcomeOf), and what a listener's
 * stream tells its client of each attempt.
 */
export function scheduledRetryMs(
  attemptInRound: number,
  config: Pick<WebhookConfig, 'maxAttempts' | 'retryScheduleMs'>,
): number | undefined {
  if (attemptInRound >= config.maxAttempts) return undefined;
  return scheduledDelayMs(config.retryScheduleMs, attemptInRound);
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
  const waitMs = verdict.outcome === 'failed' ? undefined : scheduledRetryMs(attemptInRound, config);
  if (waitMs === undefined) return { status: 'failed' };
  return { status: 'pending', nextAttemptAt: new Date(now.getTime() + jittered(waitMs, random)) };
}
