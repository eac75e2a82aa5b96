import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/** The event log: one row per site-visit lifecycle event, written in the transaction of its cause. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create table events (
      id text primary key,
      tenant_id text not null references tenants (id),
      type text not null,
      occurred_at timestamptz not null,
      resource_type text not null,
      resource_id text not null,
      payload_version text not null,
      data jsonb not null,
      seq bigint generated always as identity,
      created_at timestamptz not null default now()
    );
    create index events_tenant_seq on events (tenant_id, seq);
    create index events_resource on events (tenant_id, resource_id, seq);
  `,
  );
}
