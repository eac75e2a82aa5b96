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
