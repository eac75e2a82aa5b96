import { type Kysely, sql } from 'kysely';
import { type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * The migrations not yet applied (and any applied that this code does not know), read with two plain
 * queries: on an up-to-date database (every restart) this is all a start does, instead of Kysely's
 * Migrator, whose table and lock set-up costs a start about a third of a second on PGlite.
 */
// biome-ignore lint/suspicious/noExplicitAny: like the Migrator, it reads a database of any schema.
export async function migrationState(db: Kysely<any>): Promise<{ pending: string[]; unknown: string[] }> {
  const known = Object.keys(migrations);
  const table = sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`;
  if (!(await table.execute(db)).rows[0]?.present) return { pending: known, unknown: [] };
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const applied = rows.map((row) => row.name);
  return {
    pending: known.filter((name) => !applied.includes(name)),
    // Applied by a newer release (see migrateToLatest).
    unknown: applied.filter((name) => !known.includes(name)),
  };
}

/**
 * Applies every pending migration; throws with the failing migration's name on error.
 *
 * A database that already has every migration of this release and more (a newer release migrated it: a
 * rolling upgrade runs the new release's migrations first, docs/deployment.md) needs nothing: migrations are
 * additive, so this release serves the newer schema, and an old process restarting mid-roll, or a roll-back,
 * must start. Kysely's Migrator would refuse it ("corrupted migrations"). Only a database that lacks some of
 * this release's migrations while having others it does not know (another line of releases) is refused.
 */
// biome-ignore lint/suspicious/noExplicitAny: Kysely's Migrator works on a database of any schema.
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const state = await migrationState(db);
  if (state.pending.length === 0) return [];
  if (state.unknown.length > 0)
    throw new Error(
      `the database has migrations this release does not know (${state.unknown.join(', ')}) and lacks some of its own (${state.pending.join(', ')}): it was migrated by another line of releases; refusing to migrate it`,
    );
  const migrator = new Migrator({ db, provider });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  const failed = result.results?.find((entry) => entry.status === 'Error');
  if (result.error || failed) {
    const cause = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return (result.results ?? []).filter((entry) => entry.status === 'Success').map((entry) => entry.migrationName);
}
