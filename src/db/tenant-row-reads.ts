/**
 * GET by id for every resource: a tenant's row by id, read outside a transaction, gathered with the other
 * requests of the same turn into one statement (`BatchedLookup`). A resource describes its read once, with
 * the ids and the tenants as two array placeholders; the statement is compiled once per database handle,
 * and each batch binds its two arrays.
 *
 * The statement may read a row whose id one tenant asked for and another tenant owns (when both tenants
 * are in the batch); a lookup is answered only with the row of its own tenant and id, so another tenant's
 * row is simply not found. `tenantVersionReads` reads a row's version alone the same way.
 */
import type { Compilable, CompiledQuery, Kysely, RawBuilder, Transaction } from 'kysely';
import { sql } from 'kysely';
import { BatchedLookup } from './batched-lookup.js';
import { prepared } from './prepared-statements.js';
import type { Database } from './schema.js';

type Lookup = [tenantId: string, id: string];

/** The read of many rows: `where <id> = ${ids} and <tenant> = ${tenantIds}` (each an `any(array)`). */
export type ReadMany<Row> = (
  db: Kysely<Database>,
  ids: RawBuilder<string>,
  tenantIds: RawBuilder<string>,
) => Compilable<Row>;

/** Markers that find the two arrays' places among the compiled statement's parameters. */
const IDS = ['\u0000ids'];
const TENANTS = ['\u0000tenants'];

/**
 * `any(array)` of an array parameter, read through a scalar subquery: PostgreSQL then costs the array at ten
 * elements whether or not it knows the values, so the named statement settles on its generic plan. Given the
 * array itself, it costs the batch's actual few ids below the generic plan's ten and plans again at every
 * execution: as much CPU as the read (tests/db/generic-plans.test.ts).
 */
const anyOf = (marker: string[]) => sql<string>`any((select ${marker}::text[])::text[])`;

function compileOnce<Row>(db: Kysely<Database>, readMany: ReadMany<Row>) {
  const compiled: CompiledQuery<Row> = readMany(db, anyOf(IDS), anyOf(TENANTS)).compile();
  const idsAt = compiled.parameters.indexOf(IDS);
  const tenantsAt = compiled.parameters.indexOf(TENANTS);
  if (idsAt < 0 || tenantsAt < 0 || compiled.parameters.length !== 2)
    throw new Error('a batched read binds exactly its ids and its tenants');
  return async (lookups: Lookup[]): Promise<Row[]> => {
    const parameters: unknown[] = [];
    parameters[idsAt] = lookups.map(([, id]) => id);
    parameters[tenantsAt] = [...new Set(lookups.map(([tenantId]) => tenantId))];
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}

/**
 * The read of a resource's row by (tenant, id): a function of the database handle, the tenant and the id,
 * answering the row or undefined. Outside a transaction it joins the turn's batch (`readMany`); inside one
 * it is `findOne` on the transaction, which must see the transaction's own writes.
 */
export function tenantRowReads<Row extends { tenant_id: string; id: string }>(
  readMany: ReadMany<Row>,
  findOne: (tx: Transaction<Database>, tenantId: string, id: string) => Promise<Row | undefined>,
): (db: Kysely<Database> | Transaction<Database>, tenantId: string, id: string) => Promise<Row | undefined> {
  const lookups = new WeakMap<Kysely<Database>, BatchedLookup<Lookup, Row>>();
  return (db, tenantId, id) => {
    if (db.isTransaction) return findOne(db as Transaction<Database>, tenantId, id);
    let lookup = lookups.get(db);
    if (!lookup) {
      lookup = new BatchedLookup<Lookup, Row>(
        (row, tenant, rowId) => row.id === rowId && row.tenant_id === tenant,
        compileOnce(db, readMany),
      );
      lookups.set(db, lookup);
    }
    return lookup.find(tenantId, id);
  };
}

/** A row's version, and whose row it is. */
export interface RowVersion {
  tenant_id: string;
  id: string;
  version: number;
}

/** The tables of resources whose representation is a function of their version (http/rendered-resources.ts). */
type VersionedTable = 'sites' | 'messages';

/**
 * The read of a resource's version by (tenant, id), batched as `tenantRowReads`: one small row, for a GET
 * by id that may answer with the JSON it rendered for that version before.
 */
export function tenantVersionReads(
  table: VersionedTable,
): (db: Kysely<Database> | Transaction<Database>, tenantId: string, id: string) => Promise<RowVersion | undefined> {
  // One table's columns stand for all of them: each versioned table has these three.
  const from = (db: Kysely<Database>) => db.selectFrom(table as 'sites').select(['id', 'tenant_id', 'version']);
  return tenantRowReads<RowVersion>(
    (db, ids, tenantIds) => from(db).where('id', '=', ids).where('tenant_id', '=', tenantIds).modifyEnd(prepared()),
    (tx, tenantId, id) => from(tx).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst(),
  );
}
