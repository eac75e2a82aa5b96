import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Messages: notes tied to a site visit. Their attachments are file versions (owner type
 * `message-file-attachment`) in the tables of 0003.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create table messages (
      id text primary key,
      tenant_id text not null references tenants (id),
      seq bigint generated always as identity,
      site_visit_id text not null references site_visits (id),
      type text,
      status text not null,
      message_thread text not null,
      urgency text,
      buyer boolean,
      client_contacts boolean,
      svc_pm boolean not null,
      record_owner text not null,
      method text not null,
      occurred_at timestamptz not null,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index messages_tenant_seq on messages (tenant_id, seq);
    create index messages_site_visit on messages (site_visit_id);
  `,
  );
}
