import type { ItemRow, ProjectRow } from '../../db/schema.js';
import type { Executor } from '../../db/executor.js';

export async function insertProject(
  tx: Executor,
  row: {
    tenantId: string;
    projectId: string;
    isInteger: boolean;
    projectName: string;
    status: 'Active' | 'Inactive';
    upstreamRecordId: string | null;
    now: Date;
  },
): Promise<ProjectRow> {
  return tx
    .insertInto('projects')
    .values({
      tenant_id: row.tenantId,
      project_id: row.projectId,
      project_id_is_integer: row.isInteger,
      project_name: row.projectName,
      status: row.status,
      upstream_record_id: row.upstreamRecordId,
      created_at: row.now,
      updated_at: row.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findProject(db: Executor, tenantId: string, projectId: string): Promise<ProjectRow | undefined> {
  return db
    .selectFrom('projects')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
}

export async function updateProject(
  tx: Executor,
  tenantId: string,
  projectId: string,
  changes: { project_name?: string; status?: 'Active' | 'Inactive'; updated_at: Date },
): Promise<ProjectRow | undefined> {
  return tx
    .updateTable('projects')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', projectId)
    .returningAll()
    .executeTakeFirst();
}

/** Projects in creation order, optionally only the Active ones, at most `limit`. */
export async function listProjects(
  db: Executor,
  tenantId: string,
  options: { activeOnly: boolean; limit: number },
): Promise<ProjectRow[]> {
  let query = db.selectFrom('projects').selectAll().where('tenant_id', '=', tenantId);
  if (options.activeOnly) query = query.where('status', '=', 'Active');
  return query.orderBy('seq').limit(options.limit).execute();
}

export async function insertItem(
  tx: Executor,
  row: {
    tenantId: string;
    itemId: string;
    isInteger: boolean;
    itemName: string;
    upstreamRecordId: string | null;
    now: Date;
  },
): Promise<ItemRow> {
  return tx
    .insertInto('items')
    .values({
      tenant_id: row.tenantId,
      item_id: row.itemId,
      item_id_is_integer: row.isInteger,
      item_name: row.itemName,
      upstream_record_id: row.upstreamRecordId,
      created_at: row.now,
      updated_at: row.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findItemByName(db: Executor, tenantId: string, itemName: string): Promise<ItemRow | undefined> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('item_name', '=', itemName)
    .executeTakeFirst();
}

export async function findItem(db: Executor, tenantId: string, itemId: string): Promise<ItemRow | undefined> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('item_id', '=', itemId)
    .executeTakeFirst();
}

export async function listItems(db: Executor, tenantId: string, limit: number): Promise<ItemRow[]> {
  return db.selectFrom('items').selectAll().where('tenant_id', '=', tenantId).orderBy('seq').limit(limit).execute();
}
