/**
 * Build step (scripts/build.mjs, after tsc): makes dist/pglite-template, a PGlite data directory with every
 * migration applied and no rows, which a first start copies into DATA_DIR (embedded.ts). Skipped when the
 * existing template was made by the same PGlite from the same migrations. Made beside its place and renamed
 * into it, so that a build that dies leaves the old template or none, never half of one.
 */
import fs from 'node:fs';
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
  const database = openPglite(new PGlite(staging));
  await migrateToLatest(database.db);
  // A checkpoint leaves nothing to replay from the write-ahead log when a copy is opened.
  await database.pglite!.query('checkpoint');
  await database.close();
  fs.rmSync(TEMPLATE_MANIFEST, { force: true });
  fs.rmSync(TEMPLATE_DIR, { recursive: true, force: true });
  fs.renameSync(staging, TEMPLATE_DIR);
  fs.writeFileSync(TEMPLATE_MANIFEST, `${JSON.stringify(wanted, null, 2)}\n`);
  process.stdout.write(`database template made in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
