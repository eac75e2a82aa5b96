import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * The operator's shared inbox state: `handled_at`, when the operator marked a client's message handled (null: not
 * yet). One state for every browser and person of the operator's team, where the console's "seen" was kept per
 * browser (docs/decisions.md, "Handled messages").
 *
 * The messages already stored count as handled, at the time of this migration: the console had no shared state to
 * take over, and starting them all unhandled would greet the operator with a count of every message ever sent,
 * long since read. Done without rewriting the table: a column added with a default that is not volatile (now() is
 * stable) stores that value once in the catalogue for the rows already there, and dropping the default right after
 * leaves new rows null. No `update`: it would write every message's row while the messages' writes wait.
 *
 * `messages_client_unhandled`: the clients' messages not yet handled, in arrival order, which both the count (a
 * bounded scan of at most COUNT_LIMIT + 1 of its entries) and the inbox filtered on `handled=false` read. Partial,
 * so it holds the backlog only (what the operator has not handled yet) and costs a handled message nothing but its
 * removal. Building it reads the table once while writes to `messages` wait; `if not exists` (both steps) lets a
 * large database add the column and build the index concurrently beforehand (docs/deployment.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    alter table messages add column if not exists handled_at timestamptz default now();
    alter table messages alter column handled_at drop default;
    create index if not exists messages_client_unhandled on messages (seq)
      where record_owner = 'Client API' and handled_at is null;
  `,
  );
}
