/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import { configOrExit, refuseArguments, warnOfUnsupportedNode } from '../lib/entry-point.js';
import { isExplainedOpeningFailure, openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

const USAGE = `usage: npm run migrate
  applies the pending migrations to the database the environment names, then exits: PostgreSQL at DATABASE_URL,
  or (unset) the embedded database in DATA_DIR (default ./data), created there if absent. Takes no arguments;
  a start migrates too, so this is for a rolling upgrade (docs/deployment.md).`;

refuseArguments('migrate', USAGE);
warnOfUnsupportedNode();
const config = configOrExit();
const database = await openDatabase(config, (line) => console.log(line)).catch((error: unknown) => {
  // A cause the operator can remove is said as it is, without a stack (as a start says it).
  if (!isExplainedOpeningFailure(error)) throw error;
  process.stderr.write(`migrate failed: ${error.message}\n`);
  process.exit(1);
});
try {
  const applied = await migrateToLatest(database.db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await database.close();
}
