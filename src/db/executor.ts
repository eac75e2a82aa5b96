import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** What a repository function runs on: the database, or the transaction the caller passes down. */
export type Executor = Kysely<Database> | Transaction<Database>;
