/**
 * Each tenant's share of the PostgreSQL pool: the connections one tenant's requests hold at once are at most
 * `perTenant` (DATABASE_CONNECTIONS_PER_TENANT, half the pool by default), so that another tenant always finds
 * one. A connection held waiting for a lock, for a slow statement or for a long transaction is the same to the
 * pool: a tenant renaming a site of 450,000 visits held its row for 10 s, and its own creates on that site, each
 * waiting for it on a connection of its own, took most of the pool; another tenant's create waited with them, and
 * was answered 503 once the pool's connect timeout ran out (hostile-tenant probe).
 *
 * A tenant's request past its share waits here, holding no connection, for one of its tenant's to come back
 * (first come, first served), at most `waitMs`; then it fails with `TenantShareTimeout` (503 with Retry-After),
 * having sent nothing to the database. Counted per process, like the pool.
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

/** A request of a tenant that waited `waitMs` for one of its share of connections and got none. */
export class TenantShareTimeout extends Error {
  constructor(
    readonly perTenant: number,
    readonly waitMs: number,
  ) {
    super(`waited ${waitMs} ms for one of the tenant's ${perTenant} database connections`);
    this.name = 'TenantShareTimeout';
  }
}

/** DATABASE_CONNECTIONS_PER_TENANT's default: half the pool (at least one), so another tenant finds the other half. */
export function defaultConnectionsPerTenant(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}

export interface TenantShareOptions {
  /** The connections one tenant's requests may hold at once. */
  perTenant: number;
  /** How long a request past its tenant's share waits for one of them. */
  waitMs: number;
}

/** Running totals, for the metrics. */
export interface TenantShareTotals {
  /** Requests that found their tenant's share taken and waited. */
  waited: number;
  /** Of those, the ones that got no connection within the wait (503). */
  refused: number;
}

interface Waiter {
  grant(): void;
}

/** One tenant's places: how many are taken, and who waits for one, in order. */
interface Places {
  taken: number;
  waiting: Waiter[];
}

export class TenantShares {
  /** Only tenants holding a place are here: it holds as many entries as requests are under way, no more. */
  private readonly tenants = new Map<string, Places>();
  readonly totals: TenantShareTotals = { waited: 0, refused: 0 };

  constructor(readonly options: TenantShareOptions) {}

  /** Runs `work` holding one of the tenant's places: at once when one is free, else after a bounded wait. */
  hold<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    const places = this.tenants.get(tenantId);
    if (places === undefined) {
      this.tenants.set(tenantId, { taken: 1, waiting: [] });
      return this.run(tenantId, work);
    }
    if (places.taken < this.options.perTenant) {
      places.taken += 1;
      return this.run(tenantId, work);
    }
    return this.wait(places).then(() => this.run(tenantId, work));
  }

  /** Places taken by the tenant now (for tests). */
  taken(tenantId: string): number {
    return this.tenants.get(tenantId)?.taken ?? 0;
  }

  private async run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.release(tenantId);
    }
  }

  /** A place comes back: to the tenant's first waiter, which takes it over, or it is free. */
  private release(tenantId: string): void {
    const places = this.tenants.get(tenantId)!;
    const next = places.waiting.shift();
    if (next) {
      next.grant();
      return;
    }
    places.taken -= 1;
    if (places.taken === 0) this.tenants.delete(tenantId);
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
        reject(new TenantShareTimeout(perTenant, waitMs));
      }, waitMs);
      places.waiting.push(waiter);
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
