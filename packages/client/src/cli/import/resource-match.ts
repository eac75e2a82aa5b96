/**
 * Whether a resource holds what a row of the import says: each field of the create body (fields.ts) as the
 * import would send it (rows.ts builds the body: typed CSV cells, a message's visit by id), against the
 * resource as the service serves it. Only those fields: what the service adds (status, dates of change,
 * a visit's return label) is not the row's.
 *
 * A field the row leaves out is what a create from the row would store: no value (null), a message's status
 * Open, a visit without site assets. So a cell emptied in the corrected row asks for the value to be cleared.
 * Where the service stores a value in another form than it accepts, both are brought to one: a visit's
 * dates as instants, its projectId as text (1001 and "1001" name one project), its site assets as the set of
 * ids its siteVisitAssets list, a message's short urgency word as the full value it is stored as.
 */
import { CREATE_FIELDS } from './fields.js';
import type { ImportResource } from './rows.js';

/** What a create stores for a field left out, where that is not null. */
const STORED_WHEN_LEFT_OUT: Record<ImportResource, Record<string, unknown>> = {
  sites: {},
  'site-visits': { siteAssetIds: [] },
  messages: { status: 'Open' },
};

/** The fields compared: the create body's, but a message's clientTicketNumber (sent as its visit's id). */
function comparedFields(resource: ImportResource): readonly string[] {
  return CREATE_FIELDS[resource].filter((field) => !(resource === 'messages' && field === 'clientTicketNumber'));
}

/**
 * The fields, in the create body's order, whose value in the resource's `attributes` differs from the row's
 * `body` (a body as sent: a message's visit by siteVisitId). Empty when the resource holds what the row says.
 */
export function differingFields(
  resource: ImportResource,
  body: Record<string, unknown>,
  attributes: Record<string, unknown>,
): string[] {
  return comparedFields(resource).filter((field) => {
    const wanted = body[field] ?? STORED_WHEN_LEFT_OUT[resource][field] ?? null;
    return !sameValue(resource, field, wanted, served(resource, field, attributes));
  });
}

function served(resource: ImportResource, field: string, attributes: Record<string, unknown>): unknown {
  if (resource === 'site-visits' && field === 'siteAssetIds') {
    const assets = attributes.siteVisitAssets as Array<{ siteAssetId: unknown }> | undefined;
    return (assets ?? []).map((asset) => asset.siteAssetId);
  }
  return attributes[field] ?? null;
}

function sameValue(resource: ImportResource, field: string, wanted: unknown, actual: unknown): boolean {
  if (resource === 'site-visits') {
    if (field === 'startDate' || field === 'dueDate') return sameInstant(wanted, actual);
    if (field === 'projectId') return wanted !== null && actual !== null && String(wanted) === String(actual);
    if (field === 'siteAssetIds') return sameSet(wanted, actual);
  }
  // "High" is stored as "High – Needs attention soon".
  if (resource === 'messages' && field === 'urgency' && typeof wanted === 'string' && typeof actual === 'string')
    return actual === wanted || actual.startsWith(`${wanted} – `);
  return wanted === actual;
}

/** "2026-12-01T09:00:00Z" and the "2026-12-01T09:00:00.000Z" it is served as are one instant. */
function sameInstant(wanted: unknown, actual: unknown): boolean {
  if (typeof wanted !== 'string' || typeof actual !== 'string') return wanted === actual;
  const [a, b] = [Date.parse(wanted), Date.parse(actual)];
  return Number.isNaN(a) || Number.isNaN(b) ? wanted === actual : a === b;
}

/** The same ids in any order (a row's `123;456` and the assignments the visit lists). */
function sameSet(wanted: unknown, actual: unknown): boolean {
  if (!Array.isArray(wanted) || !Array.isArray(actual)) return false;
  const [a, b] = [new Set(wanted), new Set(actual)];
  return a.size === b.size && [...a].every((id) => b.has(id));
}
