/**
 * outbox/in-flight-attempts.ts: an attempt holds a slot while its request is under way; it gives the slot
 * back when the request ends while fewer outcomes than slots wait to be recorded, else once recorded.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { InFlightAttempts } from '../../../src/modules/outbox/in-flight-attempts.js';
import type { ClaimedDelivery } from '../../../src/modules/outbox/types.js';

function delivery(id: string): ClaimedDelivery {
  return {
    id,
    tenant_id: 'ten_1',
    attempt: 1,
    round_start: 0,
    event: {} as ClaimedDelivery['event'],
    subscription: {
      id: 'wh_1',
      target_url: 'https://hooks.example.com/x',
      is_active: true,
      signing_version: 'v1',
      secret_sealed: null,
    },
  };
}

/** An attempt whose request and record end when the test says. */
function controlledAttempt() {
  let endRequest!: () => void;
  let endRecord!: () => void;
  const requestDone = new Promise<void>((resolve) => (endRequest = resolve));
  const recordDone = new Promise<void>((resolve) => (endRecord = resolve));
  const run = async (_signal: AbortSignal, requestEnded: () => void) => {
    await requestDone;
    requestEnded();
    await recordDone;
  };
  return { run, endRequest, endRecord };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('InFlightAttempts', () => {
  it('gives a slot back when the request ends, and forgets the attempt once recorded', async () => {
    let freed = 0;
    const attempts = new InFlightAttempts({ slots: 2, logger: pino({ level: 'silent' }), onSlotFree: () => freed++ });
    const first = controlledAttempt();
    attempts.start(delivery('d1'), first.run);
    expect([attempts.size, attempts.sending]).toEqual([1, 1]);
    expect([...attempts.holdingSlots()]).toEqual([
      expect.objectContaining({ tenantId: 'ten_1', destination: 'hooks.example.com' }),
    ]);

    first.endRequest();
    await tick();
    expect([attempts.size, attempts.sending, freed]).toEqual([1, 0, 1]);
    first.endRecord();
    await attempts.settled();
    await tick();
    expect([attempts.size, attempts.sending, freed]).toEqual([0, 0, 1]);
  });

  it('keeps the slot until the record when as many outcomes as slots wait to be recorded', async () => {
    const attempts = new InFlightAttempts({ slots: 1, logger: pino({ level: 'silent' }), onSlotFree: () => {} });
    const [first, second] = [controlledAttempt(), controlledAttempt()];
    attempts.start(delivery('d1'), first.run);
    first.endRequest();
    await tick();
    attempts.start(delivery('d2'), second.run);
    second.endRequest();
    await tick();
    // One outcome waits already: the second attempt holds its slot until its own record.
    expect([attempts.size, attempts.sending]).toEqual([2, 1]);
    second.endRecord();
    first.endRecord();
    await attempts.settled();
    await tick();
    expect([attempts.size, attempts.sending]).toEqual([0, 0]);
  });

  it('gives the slot back and logs when an attempt fails outright', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const attempts = new InFlightAttempts({ slots: 1, logger, onSlotFree: () => {} });
    attempts.start(delivery('d1'), async () => {
      throw new Error('bookkeeping');
    });
    await attempts.settled();
    await tick();
    expect([attempts.size, attempts.sending]).toEqual([0, 0]);
    expect(lines.join('')).toContain('webhook delivery bookkeeping failed');
  });
});
