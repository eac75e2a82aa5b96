/**
 * What a sandbox webhook listener accepts from its stream and from the other processes: only well-formed
 * results, reports and notices; a result is a status (100-599) or an error, never neither.
 */
import { describe, expect, it } from 'vitest';
import { parseNotice, parseReport, parseResult } from '../../../src/modules/webhook-listeners/protocol.js';
import { verdictForStatus } from '../../../src/modules/outbox/attempt-verdict.js';

const result = (fields: Record<string, unknown>) =>
  JSON.stringify({ type: 'result', deliveryId: 'dlv_1', attempt: 2, durationMs: 12.4, ...fields });

describe('a stream result', () => {
  it('is a status or an error', () => {
    expect(parseResult(result({ statusCode: 204 }))).toEqual({
      deliveryId: 'dlv_1',
      attempt: 2,
      statusCode: 204,
      durationMs: 12,
      error: null,
    });
    expect(parseResult(result({ error: 'ECONNREFUSED' }))).toMatchObject({
      statusCode: null,
      error: 'forwarding failed: ECONNREFUSED',
    });
    expect(parseResult(result({ statusCode: 500, error: 'ignored' }))).toMatchObject({ statusCode: 500, error: null });
  });

  it('refuses anything else', () => {
    for (const text of [
      'not json',
      '[]',
      JSON.stringify({ type: 'attempt', deliveryId: 'dlv_1', attempt: 1, statusCode: 200 }),
      result({}),
      result({ statusCode: 99 }),
      result({ statusCode: 600 }),
      result({ statusCode: 200.5 }),
      result({ attempt: 0, statusCode: 200 }),
      result({ deliveryId: 7, statusCode: 200 }),
      result({ deliveryId: 'x'.repeat(101), statusCode: 200 }),
    ])
      expect(parseResult(text), text).toBeUndefined();
  });

  it('keeps an error short and a duration sane', () => {
    expect(parseResult(result({ error: 'e'.repeat(1000) }))?.error).toHaveLength('forwarding failed: '.length + 300);
    expect(parseResult(result({ statusCode: 200, durationMs: -5 }))?.durationMs).toBe(0);
    expect(parseResult(result({ statusCode: 200, durationMs: 'slow' }))?.durationMs).toBe(0);
  });
});

describe('notices and reports between processes', () => {
  it('are read only when well-formed', () => {
    expect(parseNotice(JSON.stringify({ kind: 'attempt', streamId: 's', deliveryId: 'd', attempt: 1 }))).toBeDefined();
    expect(parseNotice(JSON.stringify({ kind: 'closed', listenerIds: ['whl_1'] }))).toBeDefined();
    expect(
      parseNotice(JSON.stringify({ kind: 'attempt', streamId: 's', deliveryId: 'd', attempt: -1 })),
    ).toBeUndefined();
    expect(parseNotice('')).toBeUndefined();
    expect(parseNotice(undefined)).toBeUndefined();
    expect(parseReport(JSON.stringify({ deliveryId: 'd', attempt: 3, statusCode: 200 }))).toBeDefined();
    expect(parseReport('{}')).toBeUndefined();
  });
});

describe('a reported status', () => {
  it('is judged as a receiver answer is', () => {
    expect(verdictForStatus(200)).toEqual({ outcome: 'succeeded', statusCode: 200 });
    expect(verdictForStatus(302)).toMatchObject({ outcome: 'failed', error: 'redirect (HTTP 302) not followed' });
    expect(verdictForStatus(500)).toMatchObject({ outcome: 'retry', error: 'HTTP 500' });
    expect(verdictForStatus(404)).toMatchObject({ outcome: 'retry' });
  });
});
