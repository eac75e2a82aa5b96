/**
 * Whether a token's credential pair is still active and which scopes its tenant still has. Read from
 * the database at most once per client per few seconds per process, so that revoking a pair or
 * narrowing a tenant's scopes takes effect within that span, well before the tokens expire.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { findActiveCredential } from './repository.js';

export interface CredentialStatusEntry {
  active: boolean;
  tenantId: string | undefined;
  tenantScopes: ReadonlySet<string>;
  checkedAt: number;
}

const CACHE_LIMIT = 10_000;

export class CredentialStatus {
  private readonly entries = new Map<string, CredentialStatusEntry>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ttlMs = 5_000,
  ) {}

  /** The client's status when this process checked it less than the TTL ago, without waiting; else undefined. */
  checkedRecently(clientId: string): CredentialStatusEntry | undefined {
    const cached = this.entries.get(clientId);
    return cached && this.clock.now().getTime() - cached.checkedAt < this.ttlMs ? cached : undefined;
  }

  async lookup(clientId: string): Promise<CredentialStatusEntry> {
    const cached = this.checkedRecently(clientId);
    if (cached) return cached;
    const now = this.clock.now().getTime();
    const record = await findActiveCredential(this.db, clientId);
    const entry: CredentialStatusEntry = {
      active: record !== undefined,
      tenantId: record?.tenantId,
      tenantScopes: new Set(record?.tenantScopes ?? []),
      checkedAt: now,
    };
    if (this.entries.size >= CACHE_LIMIT) this.entries.clear();
    this.entries.set(clientId, entry);
    return entry;
  }

  /** Forgets what this process knows of a client (after a revocation through this process). */
  forget(clientId: string): void {
    this.entries.delete(clientId);
  }

  forgetAll(): void {
    this.entries.clear();
  }
}
