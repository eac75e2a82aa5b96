import { type RawBuilder, sql } from 'kysely';

/**
 * A jsonb value for an insert or update. The JSON text is sent as a text parameter and cast in SQL:
 * pg and PGlite serialise parameters typed jsonb differently (PGlite would encode a string twice),
 * but both pass text through unchanged.
 */
export function jsonb<T>(value: T): RawBuilder<T> {
  return sql<T>`cast(cast(${JSON.stringify(value)} as text) as jsonb)`;
}
