import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * The operator's visit workflow: the field rep, the schedule, and when the visit was dispatched, completed
 * and last had deliverables transmitted. The status moves New → Scheduled → Dispatched → Completed, and
 * the constraints keep each status consistent with what the workflow entered on the way there.
 * A schedule date and an ETA are calendar values without a time zone: stored as their canonical text
 * (YYYY-MM-DD, HH:MM), never converted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    alter table site_visits
      add column field_rep_name text,
      add column scheduled_date text,
      add column eta_time text,
      add column dispatched_at timestamptz,
      add column completed_at timestamptz,
      add column deliverables_transmitted_at timestamptz;
    alter table site_visits
      add constraint site_visits_status check (status in ('New', 'Scheduled', 'Dispatched', 'Completed')),
      add constraint site_visits_scheduled_date check (scheduled_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
      add constraint site_visits_eta_time check (eta_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      add constraint site_visits_schedule_entered check (status = 'New' or scheduled_date is not null),
      add constraint site_visits_dispatched check (status not in ('Dispatched', 'Completed') or dispatched_at is not null),
      add constraint site_visits_completed check (status <> 'Completed' or completed_at is not null);
  `,
  );
}
