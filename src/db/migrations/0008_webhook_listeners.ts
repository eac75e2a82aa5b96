import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Issue 18: the sandbox's webhook listeners (`svc listen`). A listener is a delivery target of its tenant
 * like a subscription: it has a row in webhook_subscriptions (id prefix whl_, target `listener://<id>`,
 * its own sealed v1 secret), so that it shares the outbox, the claiming and the retry schedule. Its
 * stream's state lives here: which stream holds it now (a WebSocket on some API process), until when it
 * lives without one (the grace period, renewed by the holder's heartbeat), and whether it is closed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create table webhook_listeners (
      id text primary key references webhook_subscriptions (id),
      tenant_id text not null references tenants (id),
      state text not null check (state in ('open', 'closed')),
      stream_id text,
      alive_until timestamptz not null,
      created_at timestamptz not null,
      closed_at timestamptz,
      constraint webhook_listeners_id check (id like 'whl\\_%'),
      constraint webhook_listeners_closed check ((state = 'closed') = (closed_at is not null))
    );
    create index webhook_listeners_open on webhook_listeners (tenant_id) where state = 'open';
  `,
  );
}
