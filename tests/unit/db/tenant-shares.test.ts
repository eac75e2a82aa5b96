/**
 * Each tenant's share of the pool (src/db/tenant-shares.ts): at most `perTenant` places per tenant at once, the
 * rest waiting in order for one of their own tenant's, at most `waitMs`; another tenant's places are its own.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultConnectionsPerTenant, TenantShares, TenantShareTimeout } from '../../../src/db/tenant-shares.js';

/** Work that runs until `finish` is called. */
function held() {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  let started = false;
  return {
    work: () => {
      started = true;
      return done;
    },
    get started() {
      return started;
    },
    finish,
    fail,
  };
}

describe('tenant shares of the pool', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("runs a tenant's work past its share only once one of its places comes back, in order", async () => {
    const shares = new TenantShares({ perTenant: 2, waitMs: 5_000 });
    const [a, b, c, d] = [held(), held(), held(), held()];
    const runs = [a, b, c, d].map((work) => shares.hold('t1', work.work));
    await vi.advanceTimersByTimeAsync(0);
    expect([a.started, b.started, c.started, d.started]).toEqual([true, true, false, false]);
    expect(shares.taken('t1')).toBe(2);
    expect(shares.totals.waited).toBe(2);

    // A failure gives its place back too; the first waiter takes it.
    b.fail(new Error('statement failed'));
    await expect(runs[1]).rejects.toThrow('statement failed');
    expect([c.started, d.started]).toEqual([true, false]);
    a.finish();
    await runs[0];
    expect(d.started).toBe(true);
    c.finish();
    d.finish();
    await Promise.all([runs[2], runs[3]]);
    expect(shares.taken('t1')).toBe(0);
  });

  it("never counts one tenant's work against another's share", async () => {
    const shares = new TenantShares({ perTenant: 1, waitMs: 5_000 });
    const [mine, theirs] = [held(), held()];
    const runs = [shares.hold('t1', mine.work), shares.hold('t2', theirs.work)];
    await vi.advanceTimersByTimeAsync(0);
    expect([mine.started, theirs.started]).toEqual([true, true]);
    expect(shares.totals.waited).toBe(0);
    mine.finish();
    theirs.finish();
    await Promise.all(runs);
  });

  it('refuses work that waited `waitMs` without running it, and forgets it', async () => {
    const shares = new TenantShares({ perTenant: 1, waitMs: 1_000 });
    const [first, late, later] = [held(), held(), held()];
    const running = shares.hold('t1', first.work);
    const refused = shares.hold('t1', late.work);
    const refusal = expect(refused).rejects.toBeInstanceOf(TenantShareTimeout);
    await vi.advanceTimersByTimeAsync(999);
    const after = shares.hold('t1', later.work);
    await vi.advanceTimersByTimeAsync(1);
    await refusal;
    expect(late.started).toBe(false);
    expect(shares.totals).toEqual({ waited: 2, refused: 1 });
    // The place goes to the one still waiting, not to the refused one.
    first.finish();
    await running;
    expect(later.started).toBe(true);
    later.finish();
    await after;
    expect(shares.taken('t1')).toBe(0);
  });

  it('is half the pool by default, at least one', () => {
    expect([1, 2, 3, 10, 11].map(defaultConnectionsPerTenant)).toEqual([1, 1, 1, 5, 5]);
  });
});
