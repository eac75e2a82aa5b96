/**
 * A row changed after its resource was created is not sent (a second resource); the report names the resource
 * to PATCH. Once the integrator has, the next run would report the row again, the progress log knowing
 * nothing of the PATCH: so the resource is read back (GET, at the import's pace) and compared with the row
 * (resource-match.ts). Up to date, the row is recorded so and never read again; otherwise the report names the
 * fields that differ.
 */
import { ApiError } from '../../errors.js';
import type { Pacer } from './pace.js';
import { differingFields } from './resource-match.js';
import type { ImportResource } from './rows.js';

export type ReadBack =
  | { kind: 'up-to-date' }
  | { kind: 'differs'; fields: string[] }
  /** Not there any more (404): no PATCH can bring it back. */
  | { kind: 'not-found'; why: string }
  /** Not compared: the service refused the read (`refused`: the credentials may not read, 403) or the row's
   *  visit is unknown. */
  | { kind: 'not-read'; why: string; refused?: true };

/** What the read needs of the client: the resource's GET by id. */
export interface ResourceReader {
  get(id: string): Promise<{ attributes: object }>;
}

/**
 * Reads the resource `id` and compares it with the row's `body` as the import sends it. A refusal the row
 * meets alone (404, 403, another 4xx) is answered; what would stop a send stops this too, thrown: the
 * credentials refused, or a 429, 5xx or network failure that outlasted the client's retries.
 */
export async function readBack(
  resource: ImportResource,
  reader: ResourceReader,
  pacer: Pacer,
  id: string,
  body: Record<string, unknown>,
): Promise<ReadBack> {
  await pacer.wait();
  let attributes: object;
  try {
    ({ attributes } = await reader.get(id));
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401 || error.status === 429 || error.status >= 500)
      throw error;
    const answer = `${error.status} ${error.problem.title}`;
    if (error.status === 404) return { kind: 'not-found', why: `${id} is not found any more (${answer})` };
    if (error.status === 403)
      return { kind: 'not-read', why: `these credentials may not read it (${answer})`, refused: true };
    return { kind: 'not-read', why: `reading it was refused (${answer}: ${error.problem.detail})` };
  }
  const fields = differingFields(resource, body, attributes as Record<string, unknown>);
  return fields.length === 0 ? { kind: 'up-to-date' } : { kind: 'differs', fields };
}
