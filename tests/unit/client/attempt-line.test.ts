/** The line `svc listen` prints for each attempt it forwarded. */
import { expect, it } from 'vitest';
import {
  type AttemptResult,
  attemptLine,
  type StreamAttempt,
} from '../../../packages/client/src/cli/listen/forward.js';

const attempt: StreamAttempt = {
  type: 'attempt',
  deliveryId: 'dlv_1',
  attempt: 2,
  eventId: 'evt_1',
  eventType: 'ticket.created',
  headers: {},
  body: '{}',
};
const at = new Date('2026-11-27T10:00:00.000Z');
const line = (result: Partial<AttemptResult>) =>
  attemptLine(attempt, { type: 'result', deliveryId: 'dlv_1', attempt: 2, durationMs: 4, ...result }, at);

it('shows the status, or the error, with the time, event, attempt and duration', () => {
  expect(line({ statusCode: 200 })).toBe('2026-11-27T10:00:00.000Z  ticket.created  evt_1  attempt 2  200  4 ms');
  expect(line({ statusCode: 500 })).toMatch(/attempt 2 {2}500 {2}4 ms$/);
  expect(line({ error: 'ECONNREFUSED: connect' })).toMatch(/attempt 2 {2}error \(ECONNREFUSED: connect\) {2}4 ms$/);
});

it('says that a redirect is not followed and ends the delivery', () => {
  for (const statusCode of [301, 302, 307, 308])
    expect(line({ statusCode })).toContain(`${statusCode} (a redirect: not followed, the delivery fails)`);
});

it('after a failure, says when the service retries or that the attempt was the last, as the attempt said', () => {
  const failed = (said: Partial<StreamAttempt>, result: Partial<AttemptResult>) =>
    attemptLine(
      { ...attempt, ...said },
      { type: 'result', deliveryId: 'dlv_1', attempt: 2, durationMs: 4, ...result },
      at,
    );
  const retried = { lastAttempt: false, retryInMs: 30_000 };
  expect(failed(retried, { statusCode: 500 })).toBe(
    '2026-11-27T10:00:00.000Z  ticket.created  evt_1  attempt 2  500  4 ms  retried in about 30 s',
  );
  expect(failed(retried, { error: 'ECONNREFUSED: connect' })).toMatch(/\) {2}4 ms {2}retried in about 30 s$/);
  expect(failed({ lastAttempt: false, retryInMs: 0 }, { statusCode: 429 })).toMatch(/ {2}retried at once$/);
  expect(failed({ lastAttempt: false, retryInMs: 300_000 }, { statusCode: 500 })).toMatch(/retried in about 5 min$/);
  expect(failed({ lastAttempt: false, retryInMs: 18_000_000 }, { statusCode: 500 })).toMatch(/retried in about 5 h$/);
  expect(failed({ lastAttempt: true, retryInMs: null }, { statusCode: 500 })).toMatch(
    / {2}500 {2}4 ms {2}last attempt: no retry, the delivery failed$/,
  );
  // A success or a redirect says nothing of retries (a redirect ends the delivery, and says so).
  expect(failed(retried, { statusCode: 204 })).toMatch(/ {2}204 {2}4 ms$/);
  expect(failed({ lastAttempt: true, retryInMs: null }, { statusCode: 302 })).toMatch(/the delivery fails\) {2}4 ms$/);
  // A service that does not say (older than these fields): nothing guessed.
  expect(failed({}, { statusCode: 500 })).toMatch(/ {2}500 {2}4 ms$/);
});
