import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Webhook subscriptions (their secrets sealed at rest, their delivery health) and the delivery queue:
 * one row per event × subscription, claimed by workers with FOR UPDATE SKIP LOCKED and a lease.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create table webhook_subscriptions (
      id text primary key,
      tenant_id text not null references tenants (id),
      seq bigint generated always as identity,
      target_url text not null,
      description text,
      event_types text[] not null,
      is_active boolean not null,
      signing_version text not null check (signing_version in ('legacy', 'v1')),
      secret_sealed text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      consecutive_failures integer not null default 0,
      failing_since timestamptz,
      last_success_at timestamptz,
      last_failure_at timestamptz,
      last_error text,
      deactivated_reason text,
      constraint webhook_subscriptions_v1_secret check (signing_version = 'legacy' or secret_sealed is not null)
    );
    create index webhook_subscriptions_tenant_seq on webhook_subscriptions (tenant_id, seq);

    create table webhook_deliveries (
      id text primary key,
      tenant_id text not null references tenants (id),
      event_id text not null references events (id),
      event_type text not null,
      subscription_id text not null references webhook_subscriptions (id),
      seq bigint generated always as identity,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      attempts integer not null default 0,
      round_start integer not null default 0,
      next_attempt_at timestamptz not null,
      leased_until timestamptz,
      claimed_at timestamptz,
      attempt_log jsonb not null default '[]'::jsonb,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      completed_at timestamptz,
      constraint webhook_deliveries_event_subscription unique (event_id, subscription_id)
    );
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
    create index webhook_deliveries_seq on webhook_deliveries (seq);
    create index webhook_deliveries_tenant_seq on webhook_deliveries (tenant_id, seq);
    create index webhook_deliveries_subscription_seq on webhook_deliveries (subscription_id, seq);
  `,
  );
}
