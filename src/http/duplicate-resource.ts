/**
 * A 409 duplicate-resource names the resource that holds the unique value already, in the RFC 9457 extension
 * member `existing: {type, id}` (the pair a resource's envelope shows as `data.type` and `data.id`), so that a
 * caller whose create timed out without a key, or whose import runs again, need not search for it.
 *
 * Where a duplicate is found the existing row is often not at hand: a create's one statement inserts nothing
 * on conflict and says only that, and a unique violation has aborted the transaction it happened in. So the
 * problem carries how to find that row (by the unique value, with the tenant of the request), and the error
 * handler looks it up once the request's statements are over, on the database itself: a row a racing create
 * committed is seen then. When the row cannot be read (not committed yet, gone since, the read failed) the
 * problem is answered as it is, without the member. Its size does not depend on the request: an id is at
 * most a hundred characters (ours are fixed, a reference id is bounded by its schema).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { Problem } from './problem.js';

/** The resource a duplicate-resource problem names: its `type` and `id`, as its own representation shows them. */
export interface ExistingResource {
  type: string;
  id: string;
}

/** Finds the existing resource, reading only the tenant's rows; undefined when there is none to read. */
export type ExistingLookup = (db: Kysely<Database>) => Promise<ExistingResource | undefined>;

/** The longest id `existing` carries (every id the service answers is shorter). */
const MAX_EXISTING_ID = 100;

export class DuplicateResource extends Problem {
  constructor(
    detail: string,
    private readonly existing: ExistingResource | ExistingLookup,
  ) {
    super('duplicate-resource', detail);
  }

  /** The problem as answered: naming the existing resource when it can be read, else this one as it is. */
  async naming(db: Kysely<Database>): Promise<Problem> {
    const found = typeof this.existing === 'function' ? await this.existing(db) : this.existing;
    if (!found || found.id.length > MAX_EXISTING_ID) return this;
    return new Problem('duplicate-resource', this.detail, {
      extensions: { existing: { type: found.type, id: found.id } },
    });
  }
}
