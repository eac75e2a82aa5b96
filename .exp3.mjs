import { PGlite } from '@electric-sql/pglite';
const dir = process.argv[2];
const extra = process.argv.slice(3);
const pg = new PGlite(dir, extra.length ? { startParams: [...PGlite.defaultStartParams, ...extra] } : {});
await pg.waitReady;
await pg.close();
