/**
 * Rows that carry a version and an updatedAt (a site visit, a message) and record changes made elsewhere on
 * them (a new file version, a new site code): version + 1, and updatedAt `now` unless the row's last change is
 * later. The clock was read before the row's lock was waited for (lib/clock.ts's `notBefore`, here in SQL).
 * Every function takes the tenant: another tenant's row is not found.
 */
import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

type VersionedTable = 'site_visits' | 'messages';

/** The updatedAt of a row changed at `now`: never earlier than its last change. */
export function updatedAtNotBefore(now: Date): RawBuilder<Date> {
  return sql<Date>`greatest(updated_at, ${now})`;
}

/** Records a change made elsewhere on the row; the updatedAt written, undefined when it is not the tenant's. */
export async function touchVersionedRow(
  tx: Transaction<Database>,
  table: VersionedTable,
  tenantId: string,
  id: string,
  now: Date,
): Promise<Date | undefined> {
  const row = await tx
    .updateTable(table)
    .set((eb) => ({ version: eb('version', '+', 1), updated_at: updatedAtNotBefore(now) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning('updated_at')
    .executeTakeFirst();
  return row?.updated_at;
}
