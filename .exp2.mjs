import { PGlite } from '@electric-sql/pglite';
const dir = process.argv[2];
const pg = new PGlite(dir);
await pg.waitReady;
await pg.close();
