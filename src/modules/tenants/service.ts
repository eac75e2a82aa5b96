/** Provisioning tenants and their credential pairs (operator API). */
import type { Kysely, Transaction } from 'kysely';
import { suppliedColumns } from '../../db/column-changes.js';
import type { Executor } from '../../db/executor.js';
import type { Database } from '../../db/schema.js';
import { isoTime } from '../../http/envelope.js';
import { notFound, validationProblem } from '../../http/problem.js';
import { newId } from '../../lib/ids.js';
import { isBlank } from '../../lib/visible-text.js';
import * as credentials from '../auth/service.js';
import { ALL_SCOPES } from '../auth/scopes.js';
import * as repository from './repository.js';
import {
  BYTES_PER_MIB,
  DEFAULT_MAX_ACTIVE_SUBSCRIPTIONS,
  DEFAULT_STORAGE_LIMIT_MIB,
  type TenantCreate,
  type TenantPatch,
  type TenantValue,
} from './schemas.js';

export type CredentialPairValue = credentials.CredentialPair;

/** API field → column, for the writable fields stored as given (scopes are stored in canonical order). */
const TENANT_COLUMNS = {
  name: 'name',
  apiEnabled: 'api_enabled',
  webhookAccess: 'webhook_access',
  maxActiveSubscriptions: 'max_active_subscriptions',
  storageLimitMiB: 'storage_limit_mib',
} as const;

export function toTenant(row: repository.TenantRow): TenantValue {
  return {
    id: row.id,
    tenantId: row.id,
    name: row.name,
    scopes: row.scopes,
    apiEnabled: row.api_enabled,
    webhookAccess: row.webhook_access,
    maxActiveSubscriptions: row.max_active_subscriptions,
    storageLimitMiB: row.storage_limit_mib,
    storageUsedBytes: row.storage_used_bytes,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

export const BLANK_NAME_MESSAGE =
  'must not be blank: it has only white space or invisible characters (such as U+200B, U+202E)';

/**
 * What the body schema does not say: a tenant's name shows something. Checked after the schema (422) and
 * before the tenant is looked up (404), as a rep's name is.
 */
function assertNamed(name: string | undefined): void {
  if (name !== undefined && isBlank(name)) throw validationProblem({ name: [BLANK_NAME_MESSAGE] });
}

/** Scopes in the canonical order of ALL_SCOPES, whatever order they were given in. */
function canonicalScopes(scopes: readonly string[]): string[] {
  return ALL_SCOPES.filter((scope) => scopes.includes(scope));
}

export async function issueCredentialPair(
  tx: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  now: Date,
): Promise<CredentialPairValue> {
  const pair = credentials.newCredentialPair();
  await credentials.insertCredential(tx, tenantId, pair, now);
  return pair;
}

export async function createTenant(
  db: Kysely<Database>,
  input: TenantCreate,
  now: Date,
): Promise<TenantValue & { credentials: CredentialPairValue }> {
  assertNamed(input.name);
  const pair = credentials.newCredentialPair();
  const row = await db.transaction().execute(async (tx) => {
    const tenant = await repository.insertTenant(tx, {
      id: newId('tnt'),
      name: input.name,
      scopes: canonicalScopes(input.scopes ?? ALL_SCOPES),
      apiEnabled: input.apiEnabled ?? true,
      webhookAccess: input.webhookAccess ?? true,
      maxActiveSubscriptions: input.maxActiveSubscriptions ?? DEFAULT_MAX_ACTIVE_SUBSCRIPTIONS,
      storageLimitMiB: input.storageLimitMiB ?? DEFAULT_STORAGE_LIMIT_MIB,
      now,
    });
    await credentials.insertCredential(tx, tenant.id, pair, now);
    return tenant;
  });
  return { ...toTenant(row), credentials: pair };
}

export async function getTenant(db: Kysely<Database>, tenantId: string): Promise<repository.TenantRow> {
  const tenant = await repository.findTenant(db, tenantId);
  if (!tenant) throw notFound('Tenant');
  return tenant;
}

export async function patchTenant(
  db: Kysely<Database>,
  tenantId: string,
  patch: TenantPatch,
  now: Date,
): Promise<TenantValue> {
  assertNamed(patch.name);
  const row = await repository.updateTenant(db, tenantId, {
    ...suppliedColumns<TenantPatch, repository.TenantRow>(TENANT_COLUMNS, patch),
    ...(patch.scopes !== undefined ? { scopes: canonicalScopes(patch.scopes) } : {}),
    updated_at: now,
  });
  if (!row) throw notFound('Tenant');
  return toTenant(row);
}

export async function addCredentialPair(
  db: Kysely<Database>,
  tenantId: string,
  now: Date,
): Promise<CredentialPairValue> {
  await getTenant(db, tenantId);
  return issueCredentialPair(db, tenantId, now);
}

export async function revokeCredentialPair(
  db: Kysely<Database>,
  tenantId: string,
  clientId: string,
  now: Date,
): Promise<void> {
  if (!(await credentials.revokeCredential(db, tenantId, clientId, now))) throw notFound('Credential pair');
}

export async function listCredentialPairs(db: Kysely<Database>, tenantId: string) {
  await getTenant(db, tenantId);
  const rows = await credentials.listCredentials(db, tenantId);
  return rows.map((row) => ({
    client_id: row.client_id,
    createdAt: isoTime(row.created_at),
    revokedAt: row.revoked_at ? isoTime(row.revoked_at) : null,
  }));
}

/** The tenant's row as other modules read it, or undefined. */
export function findTenant(db: Executor, tenantId: string): Promise<repository.TenantRow | undefined> {
  return repository.findTenant(db, tenantId);
}

/**
 * The tenant's row, locked until the transaction ends: writes bounded by the tenant (a cap on its active
 * subscriptions) take this lock first, and so run one at a time.
 */
export function lockTenant(tx: Transaction<Database>, tenantId: string): Promise<repository.TenantRow | undefined> {
  return repository.lockTenant(tx, tenantId);
}

export interface TenantStorage {
  /** What the tenant's file versions hold, in bytes. */
  usedBytes: number;
  /** What they may hold (the operator's storageLimitMiB), in bytes. */
  limitBytes: number;
}

/** What the tenant's files hold and may hold; undefined for an unknown tenant. */
export async function tenantStorage(db: Executor, tenantId: string): Promise<TenantStorage | undefined> {
  const tenant = await repository.findTenant(db, tenantId);
  return tenant && { usedBytes: tenant.storage_used_bytes, limitBytes: tenant.storage_limit_mib * BYTES_PER_MIB };
}

/**
 * In a new file version's transaction: adds its bytes to what the tenant's files hold, unless that would pass
 * the tenant's storage limit (whether it did). Concurrent uploads of one tenant are counted one after the other.
 */
export function addStorageUse(tx: Transaction<Database>, tenantId: string, bytes: number): Promise<boolean> {
  return repository.addStorageUse(tx, tenantId, bytes);
}
