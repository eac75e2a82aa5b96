/**
 * The receiver's durable inbox: one row per event id (SPEC Delivery semantics 1: deduplicate on the body
 * id in durable storage). PostgreSQL when given a postgres:// URL, otherwise PGlite (embedded PostgreSQL)
 * in a directory, or in memory for tests.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { WebhookEvent } from '@site-services/client';

export interface EventStore {
  /** Stores the event unless its id is already stored; true when it is new. Resolves only once it is durable. */
  save(event: WebhookEvent): Promise<boolean>;
  has(eventId: string): Promise<boolean>;
  count(eventId?: string): Promise<number>;
  close(): Promise<void>;
}

const SCHEMA = `create table if not exists webhook_events (
  event_id text primary key,
  event_type text not null,
  resource_id text not null,
  occurred_at timestamptz not null,
  received_at timestamptz not null default now(),
  payload jsonb not null
)`;

const INSERT = `insert into webhook_events (event_id, event_type, resource_id, occurred_at, payload)
  values ($1, $2, $3, $4, $5) on conflict (event_id) do nothing`;

type Query = (text: string, params?: unknown[]) => Promise<{ rows: Array<Record<string, unknown>>; inserted: number }>;

function storeOver(query: Query, close: () => Promise<void>): EventStore {
  return {
    async save(event) {
      const { inserted } = await query(INSERT, [
        event.id,
        event.type,
        event.resourceId,
        event.occurredAt,
        JSON.stringify(event),
      ]);
      return inserted === 1;
    },
    async has(eventId) {
      return (await query('select 1 from webhook_events where event_id = $1', [eventId])).rows.length > 0;
    },
    async count(eventId) {
      const { rows } = eventId
        ? await query('select count(*)::int as n from webhook_events where event_id = $1', [eventId])
        : await query('select count(*)::int as n from webhook_events');
      return Number(rows[0]?.n ?? 0);
    },
    close,
  };
}

/** `postgres://…` → PostgreSQL; a directory → PGlite there; undefined → PGlite in memory. */
export async function openEventStore(location?: string): Promise<EventStore> {
  if (location?.startsWith('postgres://') || location?.startsWith('postgresql://')) {
    const pool = new pg.Pool({ connectionString: location, max: 4 });
    // A connection the server ends (a restart, an administrator) fails its query, if any, and is replaced;
    // unhandled, pg would raise it as an uncaught error and stop the receiver.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    await pool.query(SCHEMA);
    return storeOver(
      async (text, params) => {
        const result = await pool.query(text, params);
        return { rows: result.rows, inserted: result.command === 'INSERT' ? (result.rowCount ?? 0) : 0 };
      },
      () => pool.end(),
    );
  }
  const pglite = new PGlite(location);
  await pglite.exec(SCHEMA);
  return storeOver(
    async (text, params) => {
      const result = await pglite.query<Record<string, unknown>>(text, params);
      return { rows: result.rows, inserted: result.affectedRows ?? 0 };
    },
    () => pglite.close(),
  );
}
