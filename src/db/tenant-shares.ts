/**
 * Each tenant's share of the PostgreSQL pool: the connections one tenant's requests hold at once are at most
 * `perTenant` (DATABASE_CONNECTIONS_PER_TENANT, half the pool by default), so that another tenant always finds
 * one. A connection held waiting for a lock, for a slow statement or for a long transaction is the same to the
 * pool: a tenant renaming a site of 450,000 visits held its row for 10 s, and its own creates on that site, each
 * waiting for it on a connection of its own, took most of the pool; another tenant's create waited with them, and
 * was answered 503 once the pool's connect timeout ran out (hostile-tenant probe).
 *
 * A share alone does not keep the pool for the others when two tenants fill theirs (two halves are the whole
 * pool). So the tenants' second and later places together stop at `sharedLimit` places taken (the pool less a
 * reserve, `defaultSharedLimit`): a tenant holding none always gets its first place at once, and the reserve is
 * left to such tenants, and to the uncharged work (the turn's batches, the delivery worker, the operator). A
 * tenant held back by that limit gets a place as others come back, tenants held back taking turns, before the
 * tenant that gave the place back takes it again.
 *
 * A tenant's request past its share, or held back, waits here, holding no connection, in its tenant's order (first
 * come, first served), at most `waitMs`; then it fails with `TenantShareTimeout` (503 with Retry-After), having
 * sent nothing to the database. Counted per process, like the pool.
 *
 * Charged explicitly, with the tenant the caller names (`asTenant`): a request's transaction, and a statement of
 * a turn's batch that runs alone (db/turn-batches.ts). A batch of several statements is charged to none: it may
 * hold several tenants' statements, and waits at most BATCH_LOCK_WAIT for a lock. Neither is the work of the
 * delivery worker, the listener hub or the operator, which no tenant can make wait. Never inside a transaction
 * (it already holds its connection), and never on PGlite (one connection, one transaction at a time: a lock is
 * never waited for there, every request queues behind the one transaction under way).
 */
import type { Kysely } from 'kysely';
import type { Executor } from './executor.js';
import type { Database } from './schema.js';

/** A request of a tenant that waited `waitMs` for a place and got none. */
export class TenantShareTimeout extends Error {
  constructor(
    readonly perTenant: number,
    readonly waitMs: number,
    /** The places the tenant held when the wait ended: its whole share, or fewer when it was held back. */
    readonly held: number,
  ) {
    super(`waited ${waitMs} ms for one of the tenant's ${perTenant} database connections (holding ${held})`);
    this.name = 'TenantShareTimeout';
  }

  /** Whether the tenant's own requests filled its share (else the other tenants' held it back). */
  get shareFull(): boolean {
    return this.held >= this.perTenant;
  }
}

/** DATABASE_CONNECTIONS_PER_TENANT's default: half the pool (at least one), so another tenant finds the other half. */
export function defaultConnectionsPerTenant(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}

/**
 * The places the tenants' second and later requests may take together: the pool less a quarter of it (at least
 * one), kept for tenants holding none and for the uncharged work. None when a share is the whole pool (the bound
 * lifted).
 */
export function defaultSharedLimit(poolSize: number, perTenant: number): number | undefined {
  return perTenant >= poolSize ? undefined : poolSize - Math.max(1, Math.floor(poolSize / 4));
}

export interface TenantShareOptions {
  /** The connections one tenant's requests may hold at once. */
  perTenant: number;
  /** How long a request past its tenant's share, or held back, waits for a place. */
  waitMs: number;
  /** Places taken by all tenants past which only a tenant's first place is given (none: no such bound). */
  sharedLimit?: number | undefined;
}

/** Running totals, for the metrics. */
export interface TenantShareTotals {
  /** Requests that found their tenant's share taken, or were held back, and waited. */
  waited: number;
  /** Of those, the ones that got no place within the wait (503). */
  refused: number;
}

interface Waiter {
  grant(): void;
}

/** One tenant's places: how many are taken, who waits for one, in order, and whether it is held back. */
interface Places {
  tenantId: string;
  taken: number;
  waiting: Waiter[];
  heldBack: boolean;
}

export class TenantShares {
  /** Only tenants holding or waiting for a place are here: as many entries as requests are under way, no more. */
  private readonly tenants = new Map<string, Places>();
  /** Tenants with a request waiting only for the shared limit, in the order they take turns. */
  private heldBack: Places[] = [];
  private takenByAll = 0;
  private readonly sharedLimit: number;
  readonly totals: TenantShareTotals = { waited: 0, refused: 0 };

  constructor(readonly options: TenantShareOptions) {
    this.sharedLimit = options.sharedLimit ?? Number.POSITIVE_INFINITY;
  }

  /** Runs `work` holding one of the tenant's places: at once when one is free, else after a bounded wait. */
  hold<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    let places = this.tenants.get(tenantId);
    if (places === undefined) {
      places = { tenantId, taken: 0, waiting: [], heldBack: false };
      this.tenants.set(tenantId, places);
    }
    if (places.waiting.length === 0 && this.mayTake(places)) {
      this.take(places);
      return this.run(places, work);
    }
    return this.wait(places).then(() => this.run(places, work));
  }

  /** Places taken by the tenant now (for tests). */
  taken(tenantId: string): number {
    return this.tenants.get(tenantId)?.taken ?? 0;
  }

  /** A tenant's first place always; a further one within its share and the shared limit. */
  private mayTake(places: Places): boolean {
    return places.taken === 0 || (places.taken < this.options.perTenant && this.takenByAll < this.sharedLimit);
  }

  private take(places: Places): void {
    places.taken += 1;
    this.takenByAll += 1;
  }

  private async run<T>(places: Places, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.release(places);
    }
  }

  /** A place comes back: to the tenants held back first, in turn, then to the tenant's own first waiter. */
  private release(places: Places): void {
    places.taken -= 1;
    this.takenByAll -= 1;
    this.grantHeldBack();
    if (places.waiting.length > 0) {
      if (this.mayTake(places)) this.grantFirst(places);
      else this.holdBack(places);
    }
    this.forgetIfIdle(places);
  }

  /** Gives places to the tenants held back, one each in turn, while the shared limit allows. */
  private grantHeldBack(): void {
    while (this.takenByAll < this.sharedLimit && this.heldBack.length > 0) {
      const places = this.heldBack.shift()!;
      places.heldBack = false;
      // Its waiters may have given up, or it may have reached its share since (its own places then serve them).
      if (places.waiting.length === 0 || places.taken >= this.options.perTenant) continue;
      this.grantFirst(places);
      if (places.waiting.length > 0) this.holdBack(places);
    }
  }

  private grantFirst(places: Places): void {
    this.take(places);
    places.waiting.shift()!.grant();
  }

  /** Queues the tenant for a place under the shared limit, if its share has room for one. */
  private holdBack(places: Places): void {
    if (places.heldBack || places.taken >= this.options.perTenant) return;
    places.heldBack = true;
    this.heldBack.push(places);
  }

  private forgetIfIdle(places: Places): void {
    if (places.taken === 0 && places.waiting.length === 0) this.tenants.delete(places.tenantId);
  }

  private wait(places: Places): Promise<void> {
    this.totals.waited += 1;
    const { perTenant, waitMs } = this.options;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        places.waiting.splice(places.waiting.indexOf(waiter), 1);
        this.totals.refused += 1;
        this.forgetIfIdle(places);
        reject(new TenantShareTimeout(perTenant, waitMs, places.taken));
      }, waitMs);
      places.waiting.push(waiter);
      this.holdBack(places);
    });
  }
}
const sharesOf = new WeakMap<Kysely<Database>, TenantShares>();

/** Bounds the connections each tenant's requests hold on `db` (its PostgreSQL pool) to `shares`. */
export function shareConnectionsOf(db: Kysely<Database>, shares: TenantShares): void {
  sharesOf.set(db, shares);
}

/** The shares of `db` (undefined where there are none: PGlite). */
export function tenantSharesOf(db: Kysely<Database>): TenantShares | undefined {
  return sharesOf.get(db);
}

/**
 * Runs `work`, which takes one connection of `executor`'s pool for itself (a transaction, a statement alone), on
 * one of `tenantId`'s share of them. Without a tenant (the worker's, the operator's work), in a transaction, or on
 * a database without shares, it just runs.
 */
export function asTenant<T>(executor: Executor, tenantId: string | undefined, work: () => Promise<T>): Promise<T> {
  const shares = tenantId === undefined || executor.isTransaction ? undefined : sharesOf.get(executor);
  return shares ? shares.hold(tenantId!, work) : work();
}
