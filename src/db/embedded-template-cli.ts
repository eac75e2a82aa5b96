/**
 * Build step (scripts/build.mjs, after tsc): makes dist/pglite-template, a PGlite data directory with every
 * migration applied and no rows, which a first start copies into DATA_DIR (embedded.ts). Skipped when the
 * existing template was made by the same PGlite from the same migrations. Made beside its place and renamed
 * into it, so that a build that dies leaves the old template or none, never half of one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openPglite } from './database.js';
import {
  installedPgliteVersion,
  migrationsFingerprint,
  readTemplateManifest,
  TEMPLATE_DIR,
  TEMPLATE_MANIFEST,
  type TemplateManifest,
} from './embedded.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

const wanted: TemplateManifest = {
  pglite: installedPgliteVersion(),
  migrations: Object.keys(migrations),
  fingerprint: migrationsFingerprint(),
};
const existing = readTemplateManifest();
if (existing && JSON.stringify(existing) === JSON.stringify(wanted) && fs.existsSync(TEMPLATE_DIR)) {
  process.stdout.write('database template is up to date\n');
} else {
  const started = Date.now();
  const staging = `${TEMPLATE_DIR}.building-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  const pglite = new PGlite(staging);
  const database = openPglite(pglite);
  await migrateToLatest(database.db);
  // A first start's cost is mostly the number of files it copies (a few milliseconds each on some
  // filesystems), so the template holds only what the service opens: PGlite serves the database
  // "postgres", and the service never creates a database, so the template databases go (two thirds of
  // the files). A checkpoint leaves nothing to replay from the write-ahead log when a copy is opened.
  for (const name of ['template0', 'template1']) {
    await pglite.exec(`alter database ${name} is_template false`);
    await pglite.exec(`drop database ${name}`);
  }
  await pglite.query('checkpoint');
  await database.close();
  // Free-space maps and visibility maps are hints PostgreSQL rebuilds when it needs them (a missing one
  // reads as empty): a copy without them is a sixth smaller again.
  for (const entry of fs.readdirSync(path.join(staging, 'base'), { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && /_(fsm|vm)$/.test(entry.name)) fs.rmSync(path.join(entry.parentPath, entry.name));
  }
  fs.rmSync(TEMPLATE_MANIFEST, { force: true });
  fs.rmSync(TEMPLATE_DIR, { recursive: true, force: true });
  fs.renameSync(staging, TEMPLATE_DIR);
  fs.writeFileSync(TEMPLATE_MANIFEST, `${JSON.stringify(wanted, null, 2)}\n`);
  process.stdout.write(`database template made in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
