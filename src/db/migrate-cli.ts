/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from '../config.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

const config = loadConfig();
const database = await openDatabase(config, (line) => console.log(line));
try {
  const applied = await migrateToLatest(database.db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await database.close();
}
