/**
 * Each tenant's share of the pool (src/db/tenant-shares.ts): at most `perTenant` places per tenant at once, the
 * rest waiting in order for one of their own tenant's, at most `waitMs`; another tenant's places are its own; the
 * tenants' second and later places stop at the shared limit, which a tenant's first place is never held back by.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  defaultConnectionsPerTenant,
  defaultSharedLimit,
  TenantShares,
  TenantShareTimeout,
} from '../../../src/db/tenant-shares.js';

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
  it('gives a tenant its first place past the shared limit, and holds back further places at it', async () => {
    // A pool of 10 with shares of 5: two tenants filling theirs would take it whole; the limit stops them at 8.
    const shares = new TenantShares({ perTenant: 5, waitMs: 5_000, sharedLimit: 8 });
    const first = Array.from({ length: 5 }, () => held());
    const second = Array.from({ length: 5 }, () => held());
    const runs = [...first.map((w) => shares.hold('t1', w.work)), ...second.map((w) => shares.hold('t2', w.work))];
    await vi.advanceTimersByTimeAsync(0);
    expect(shares.taken('t1')).toBe(5);
    expect(shares.taken('t2')).toBe(3);
    // A third and a fourth tenant still find a place at once.
    const [third, fourth] = [held(), held()];
    runs.push(shares.hold('t3', third.work), shares.hold('t4', fourth.work));
    await vi.advanceTimersByTimeAsync(0);
    expect([third.started, fourth.started]).toEqual([true, true]);

    // Places coming back below the limit go to the tenant held back, not to the one that gave them back.
    const more = held();
    runs.push(shares.hold('t1', more.work));
    third.finish();
    fourth.finish();
    first[0]!.finish();
    await vi.advanceTimersByTimeAsync(0);
    // 10 taken, 7 once three came back: t2, held back first, takes one (8, the limit); t1's waits for a turn.
    expect(shares.taken('t2')).toBe(4);
    expect(more.started).toBe(false);
    first[1]!.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(shares.taken('t2')).toBe(5);
    expect(more.started).toBe(false);
    first[2]!.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(more.started).toBe(true);

    for (const w of [...first, ...second, more]) w.finish();
    await Promise.all(runs);
    expect([shares.taken('t1'), shares.taken('t2')]).toEqual([0, 0]);
  });

  it('refuses work held back by the shared limit, saying the tenant held fewer than its share', async () => {
    const shares = new TenantShares({ perTenant: 3, waitMs: 1_000, sharedLimit: 2 });
    const [a, b, c] = [held(), held(), held()];
    const runs = [shares.hold('t1', a.work), shares.hold('t1', b.work)];
    const refused = shares.hold('t1', c.work);
    const refusal = expect(refused).rejects.toMatchObject({ held: 2, shareFull: false });
    await vi.advanceTimersByTimeAsync(1_000);
    await refusal;
    expect(c.started).toBe(false);
    a.finish();
    b.finish();
    await Promise.all(runs);
    expect(shares.taken('t1')).toBe(0);
  });

  it('keeps a quarter of the pool (at least one) from second places, unless a share is the whole pool', () => {
    expect([10, 4, 20, 2].map((pool) => defaultSharedLimit(pool, defaultConnectionsPerTenant(pool)))).toEqual([
      8, 3, 15, 1,
    ]);
    expect(defaultSharedLimit(10, 10)).toBeUndefined();
  });
});
