/**
 * What a new visit names (its project, site and item) as the tenant has them: read before its create, and
 * checked again in its create's statement (the insert's guard). Every function takes the tenant.
 */
import { type SqlBool, sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Executor } from '../../db/executor.js';
import { prepared } from '../../db/prepared-statements.js';
import type { InsertGuard } from '../../db/single-row-insert.js';
import { readInTurnBatch } from '../../db/turn-batches.js';

/** What a new visit names, as far as the tenant has it (undefined: not the tenant's), and whether its ticket number is taken. */
export interface VisitReferences {
  project: { project_id: string; project_id_is_integer: boolean; status: string } | undefined;
  site: { id: string; site_code: string } | undefined;
  item: { item_id: string; item_name: string } | undefined;
  ticketTaken: boolean;
}

interface VisitReferencesRow {
  project_id: string | null;
  project_id_is_integer: boolean | null;
  project_status: string | null;
  site_id: string | null;
  site_code: string | null;
  item_id: string | null;
  item_name: string | null;
  ticket_taken: boolean;
}

/**
 * Locks (key share) the tenant's site of that code until the transaction ends, for a create made in a
 * transaction (the lock `visitReferencesGuard` takes, and why): a PATCH changing the code is waited for first,
 * and the references read next no longer find it.
 */
export async function lockSiteOfCode(tx: Transaction<Database>, tenantId: string, siteCode: string): Promise<void> {
  await sql`select from sites where tenant_id = ${tenantId} and site_code = ${siteCode} for key share`.execute(tx);
}

/**
 * The project, site and item a new visit names and its ticket number's use, in one statement (one round
 * trip instead of four; each join is on a unique key, so there is exactly one row).
 */
export async function findVisitReferences(
  db: Executor,
  tenantId: string,
  names: { projectId: string; siteCode: string; itemName: string; clientTicketNumber: string | null },
): Promise<VisitReferences> {
  const ticketTaken =
    names.clientTicketNumber === null
      ? sql<boolean>`false`
      : sql<boolean>`exists (select from site_visits v where v.tenant_id = ${tenantId} and v.client_ticket_number = ${names.clientTicketNumber})`;
  // With the other reads of this turn (the creates' reference reads arrive together).
  const rows = await readInTurnBatch(
    db,
    sql<VisitReferencesRow>`
    select p.project_id, p.project_id_is_integer, p.status as project_status, s.id as site_id, s.site_code,
      i.item_id, i.item_name, ${ticketTaken} as ticket_taken
    from (select 1) as one
    left join projects p on p.tenant_id = ${tenantId} and p.project_id = ${names.projectId}
    left join sites s on s.tenant_id = ${tenantId} and s.site_code = ${names.siteCode}
    left join items i on i.tenant_id = ${tenantId} and i.item_name = ${names.itemName} ${prepared()}`,
    tenantId,
  );
  const row = rows[0]!;
  return {
    project:
      row.project_id === null
        ? undefined
        : {
            project_id: row.project_id,
            project_id_is_integer: row.project_id_is_integer!,
            status: row.project_status!,
          },
    site: row.site_id === null ? undefined : { id: row.site_id, site_code: row.site_code! },
    item: row.item_id === null ? undefined : { item_id: row.item_id, item_name: row.item_name! },
    ticketTaken: row.ticket_taken,
  };
}

/** The project, site and item a new visit was built from, as read before its insert. */
export interface NamedReferences {
  project: { project_id: string; project_id_is_integer: boolean };
  site: { id: string; site_code: string };
  item: { item_id: string; item_name: string };
}

/**
 * The guard of a new visit's insert (`SingleRowInsert.guard`): the project is still the tenant's, Active
 * (reference/service.ts's `activeProject`) and served in the same form; the site still has the code the
 * visit named it by; the item still has its name. What the visit's row and response took from them holds.
 *
 * The site is locked (key share) by the check: a PATCH changing its code either waits for the create's commit
 * (and then moves the new visit to its next version with the others), or has changed it already, when the
 * check waits for that PATCH and finds the code gone. Without the lock the check read the code as last
 * committed, the insert waited for the PATCH (its foreign key), and the visit was answered and announced
 * (ticket.created) at version 1 with the old code, while its stored version 1 showed the new one.
 */
export function visitReferencesGuard(tenantId: string, references: NamedReferences): InsertGuard {
  const { project, site, item } = references;
  return {
    shape: 'visit-references',
    condition: sql<SqlBool>`exists (select from projects p where p.tenant_id = ${tenantId} and p.project_id = ${project.project_id}
        and p.project_id_is_integer = ${project.project_id_is_integer} and p.status = 'Active')
      and exists (select from sites s where s.id = ${site.id} and s.tenant_id = ${tenantId} and s.site_code = ${site.site_code} for key share)
      and exists (select from items i where i.tenant_id = ${tenantId} and i.item_id = ${item.item_id} and i.item_name = ${item.item_name})`,
    parameters: [
      tenantId,
      project.project_id,
      project.project_id_is_integer,
      site.id,
      tenantId,
      site.site_code,
      tenantId,
      item.item_id,
      item.item_name,
    ],
  };
}
