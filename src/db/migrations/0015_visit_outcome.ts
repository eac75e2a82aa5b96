import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * What the operator recorded at the end of a visit, kept on the visit for the operator's view: the quality review
 * that `complete` took, and the notes of the last deliverables transmission (beside `deliverables_transmitted_at`).
 * Before this, the review showed only as the status and the notes only in the `deliverables.transmitted` event,
 * which the operator API does not list and WEBHOOK_HISTORY_RETENTION deletes.
 *
 * No check ties the columns to the status, and visits already Completed are not rewritten: during a rolling
 * upgrade the previous release still completes and transmits, writing neither column, and a check would refuse its
 * updates (a 500 to the operator); rewriting every completed visit would lock and copy a large table's rows for what
 * the status already says (`complete` refuses a failed review), so the operator's view reads a Completed visit
 * without a recorded review as passed (representation.ts). The notes of an earlier
 * transmission are taken from its event when it is still there (the latest event of the visit dated
 * `deliverables_transmitted_at`: the workflow writes both with the same time); a visit whose event was purged
 * keeps null, as a transmission without notes does.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    alter table site_visits
      add column quality_review_passed boolean,
      add column deliverables_notes text;

    update site_visits v set deliverables_notes = last.notes
      from (
        select distinct on (tenant_id, resource_id) tenant_id, resource_id, occurred_at, data ->> 'notes' as notes
        from events where type = 'deliverables.transmitted' and resource_type = 'site-visits'
        order by tenant_id, resource_id, seq desc
      ) as last
      where last.tenant_id = v.tenant_id and last.resource_id = v.id
        and last.occurred_at = v.deliverables_transmitted_at;
  `,
  );
}
