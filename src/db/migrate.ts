import { type Kysely, Migrator, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Applies every pending migration; throws with the failing migration's name on error. */
// biome-ignore lint/suspicious/noExplicitAny: Kysely's Migrator works on a database of any schema.
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  const failed = result.results?.find((entry) => entry.status === 'Error');
  if (result.error || failed) {
    const cause = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return (result.results ?? []).filter((entry) => entry.status === 'Success').map((entry) => entry.migrationName);
}
