import type { Executor } from '../../db/executor.js';

export interface CredentialRecord {
  clientId: string;
  tenantId: string;
  secretHash: string;
  tenantScopes: string[];
}

export async function insertCredential(
  tx: Executor,
  tenantId: string,
  clientId: string,
  secretHash: string,
  now: Date,
): Promise<void> {
  await tx
    .insertInto('client_credentials')
    .values({ client_id: clientId, tenant_id: tenantId, secret_hash: secretHash, created_at: now, revoked_at: null })
    .execute();
}

/** The credential with its tenant's current scopes; undefined when unknown or revoked. */
export async function findActiveCredential(db: Executor, clientId: string): Promise<CredentialRecord | undefined> {
  const row = await db
    .selectFrom('client_credentials as c')
    .innerJoin('tenants as t', 't.id', 'c.tenant_id')
    .select(['c.client_id', 'c.tenant_id', 'c.secret_hash', 't.scopes'])
    .where('c.client_id', '=', clientId)
    .where('c.revoked_at', 'is', null)
    .executeTakeFirst();
  return (
    row && { clientId: row.client_id, tenantId: row.tenant_id, secretHash: row.secret_hash, tenantScopes: row.scopes }
  );
}

/** Replaces a pair's secret hash if it is still the one read (a compare-and-set: concurrent upgrades write once). */
export async function replaceSecretHash(
  db: Executor,
  read: Pick<CredentialRecord, 'tenantId' | 'clientId' | 'secretHash'>,
  secretHash: string,
): Promise<void> {
  await db
    .updateTable('client_credentials')
    .set({ secret_hash: secretHash })
    .where('tenant_id', '=', read.tenantId)
    .where('client_id', '=', read.clientId)
    .where('secret_hash', '=', read.secretHash)
    .execute();
}

export async function listCredentials(db: Executor, tenantId: string) {
  return db
    .selectFrom('client_credentials')
    .select(['client_id', 'created_at', 'revoked_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('client_id')
    .execute();
}

/** Revokes a pair; false when the tenant has no such active pair. */
export async function revokeCredential(tx: Executor, tenantId: string, clientId: string, now: Date): Promise<boolean> {
  const result = await tx
    .updateTable('client_credentials')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
