import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Integrators' probe: `GET /api/v1/messages?siteVisitId=` lists one visit's messages in the list's order. The
 * index on `site_visit_id` alone finds them but not in `seq` order, so a page of a visit of many messages read
 * and sorted all of them; in the list's columns and order, a page reads its rows and the one after, and a visit
 * of another tenant reads nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create index messages_tenant_visit_seq on messages (tenant_id, site_visit_id, seq);
  `,
  );
}
