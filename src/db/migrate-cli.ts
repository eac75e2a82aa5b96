/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from '../config.js';
import { isExplainedOpeningFailure, openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

const config = loadConfig();
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
