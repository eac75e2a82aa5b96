import { type Kysely, sql } from 'kysely';

/**
 * Runs a script of DDL statements one by one. PGlite's extended protocol takes one statement
 * per query, so a migration is written as one readable script and split on statement ends here.
 * Statements must not contain a semicolon followed by a line break inside them.
 */
export async function runScript(db: Kysely<unknown>, script: string): Promise<void> {
  const statements = script
    .split(/;\s*\n/)
    .map((statement) => statement.trim())
    .filter(Boolean);
  for (const statement of statements) await sql.raw(statement).execute(db);
}
