/**
 * What a run does with each row of the file, from the progress log: a row is known by its identity (its
 * content, identity.ts) wherever it moved; a row the log has not seen is either new (sent) or an earlier row
 * corrected in place, which is what decides whether sending it could create a resource twice.
 *
 * How rows moved between two revisions of the file is read as `diff` reads it: the rows found in both, in
 * the longest run kept in order, are the fixed points; between two of them, the rows of the new revision
 * seen nowhere before take the places of the earlier revision's rows found nowhere now, one for one in
 * order. A row in the place of a row that was created is that row changed after its creation: it is not
 * sent (a second resource), and is reported with the resource's id. Before the places, the natural key
 * (siteCode, clientTicketNumber) of a site or visit row finds the created row it changes wherever it was.
 * Revisions are followed one after another from the first, so a row corrected twice is still known.
 */
import { contentKey, fileRowKey, type IdentifiedRow, identityOf, NATURAL_KEY } from './identity.js';
import type { ProgressLog, RejectedEntry, Revision } from './progress-log.js';
import type { ImportResource } from './rows.js';

export type RowState =
  /** Created (by the log): not sent again. */
  | { kind: 'created'; id: string }
  /** Changed since its resource was created: not sent. `id` is null when only a key's conflict told it. */
  | { kind: 'changed'; id: string | null; matchedBy: 'siteCode' | 'clientTicketNumber' | 'position' | 'key' }
  /** Changed since its resource was created, and that resource found to match it since: neither sent nor read. */
  | { kind: 'up-to-date'; id: string }
  /** Refused before with this same content. */
  | { kind: 'rejected'; entry: RejectedEntry }
  /** Sent under `key` without a recorded answer (or in the place of such a row): sent again under that key. */
  | { kind: 'in-doubt'; key: string }
  | { kind: 'new' };

const NEW: RowState = { kind: 'new' };

/**
 * A 409 idempotency-conflict answered a row's key: the key had created a resource from other content (a row
 * corrected while its first request's answer was lost), so the row is the changed version of that resource.
 */
export const isKeyConflict = (entry: { status: number; type: string }) =>
  entry.status === 409 && entry.type.endsWith('/idempotency-conflict');

/** What the log itself says of an identity. */
function recorded(log: ProgressLog, identity: string): RowState | undefined {
  const entry = log.entryOf(identity);
  if (!entry) return undefined;
  if (entry.outcome === 'created') return { kind: 'created', id: entry.id };
  if (entry.outcome === 'up-to-date') return { kind: 'up-to-date', id: entry.id };
  if (entry.outcome === 'sending') return { kind: 'in-doubt', key: entry.key };
  if (isKeyConflict(entry)) return { kind: 'changed', id: null, matchedBy: 'key' };
  return { kind: 'rejected', entry };
}

/** The state a row takes over from the earlier row whose place it took. */
function inherit(earlier: RowState): RowState {
  if (earlier.kind === 'created' || earlier.kind === 'changed' || earlier.kind === 'up-to-date')
    return { kind: 'changed', id: earlier.id, matchedBy: 'position' };
  if (earlier.kind === 'in-doubt') return earlier;
  return NEW;
}

/** `[new index, old index]` pairs of a longest run increasing in both (patience sorting). */
function keptInOrder(oldIndexOf: Array<number | undefined>): Array<[number, number]> {
  const tails: number[] = [];
  const previous = new Map<number, number>();
  oldIndexOf.forEach((old, j) => {
    if (old === undefined) return;
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (oldIndexOf[tails[middle]!]! < old) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous.set(j, tails[low - 1]!);
    tails[low] = j;
  });
  const pairs: Array<[number, number]> = [];
  for (let j = tails.at(-1); j !== undefined; j = previous.get(j)) pairs.unshift([j, oldIndexOf[j]!]);
  return pairs;
}

interface NaturalKeys {
  resource: ImportResource;
  rows: IdentifiedRow[];
  log: ProgressLog;
}

interface Stage {
  identities: string[];
  states: RowState[];
}

function identitiesOf(hashes: string[]): string[] {
  const seen = new Map<string, number>();
  return hashes.map((hash) => {
    const n = (seen.get(hash) ?? 0) + 1;
    seen.set(hash, n);
    return identityOf(hash, n);
  });
}

/**
 * The states of a revision's rows, given the revision before it. `natural` (the current file only: older
 * revisions are hashes) first settles rows by their natural key.
 */
function follow(
  earlier: Stage | undefined,
  identities: string[],
  own: (identity: string, index: number) => RowState | undefined,
  natural?: NaturalKeys,
): RowState[] {
  const oldIndex = new Map(earlier?.identities.map((identity, index) => [identity, index]));
  const states: Array<RowState | undefined> = identities.map(own);
  const present = new Set(identities);
  const claimed = natural ? byNaturalKey(natural, states, present) : new Set<string>();
  if (!earlier) return states.map((state) => state ?? NEW);
  // A row seen in the revision before is what it was there.
  identities.forEach((identity, index) => {
    const old = oldIndex.get(identity);
    if (!states[index] && old !== undefined) states[index] = earlier.states[old];
  });
  const taken = (index: number) => {
    const state = earlier.states[index]!;
    return present.has(earlier.identities[index]!) || ('id' in state && state.id !== null && claimed.has(state.id));
  };
  let [newFrom, oldFrom] = [0, 0];
  const fixed = keptInOrder(identities.map((identity) => oldIndex.get(identity)));
  for (const [newAt, oldAt] of [...fixed, [identities.length, earlier.identities.length] as const]) {
    const gone: number[] = [];
    for (let old = oldFrom; old < oldAt; old++) if (!taken(old)) gone.push(old);
    for (let index = newFrom; index < newAt; index++) {
      if (states[index]) continue;
      const place = gone.shift();
      states[index] = place === undefined ? NEW : inherit(earlier.states[place]!);
    }
    [newFrom, oldFrom] = [newAt + 1, oldAt + 1];
  }
  return states.map((state) => state ?? NEW);
}

/**
 * Settles the rows not known by their content whose natural key a created row had (or a row up to date with
 * its resource, whose natural key may have been changed with the resource's): changed after that creation,
 * or, while another row still holds that content, a second row with the same value (sent: the service
 * refuses it as a duplicate). Answers the ids of the resources so claimed.
 */
function byNaturalKey(natural: NaturalKeys, states: Array<RowState | undefined>, present: Set<string>): Set<string> {
  const claimed = new Set<string>();
  const field = NATURAL_KEY[natural.resource];
  if (!field) return claimed;
  // The latest line of a natural key wins: a row up to date with its resource was written after its creation.
  const created = new Map(natural.log.resourceEntries().map((entry) => [entry[field], entry]));
  for (const [index, row] of natural.rows.entries()) {
    const entry = row.naturalKey === undefined ? undefined : created.get(row.naturalKey);
    if (states[index] || !entry) continue;
    if (present.has(identityOf(entry.hash, entry.n))) {
      states[index] = NEW;
      continue;
    }
    states[index] = { kind: 'changed', id: entry.id, matchedBy: field };
    claimed.add(entry.id);
  }
  return claimed;
}

/** The state of each row of the file this run reads (`rows`, whose SHA-256 is `sha256`). */
export function rowStates(
  resource: ImportResource,
  log: ProgressLog,
  rows: IdentifiedRow[],
  sha256: string,
): RowState[] {
  const revisions: Array<Revision | undefined> = [...log.revisions];
  // The current file follows the revision before it: itself when the log already has it (a resumed run).
  if (revisions.at(-1)?.sha256 !== sha256) revisions.push(undefined);
  let stage: Stage | undefined;
  for (const revision of revisions.slice(0, -1)) {
    const identities = identitiesOf(revision!.rows);
    const states = follow(stage, identities, ownState(resource, log, revision!));
    stage = { identities, states };
  }
  const last = revisions.at(-1);
  const identities = rows.map((row) => row.identity);
  return follow(stage, identities, last ? ownState(resource, log, last) : ownState(resource, log), {
    resource,
    rows,
    log,
  });
}

/** What the log says of a row, and of a row of a converted version 1 revision with no line of its own. */
function ownState(resource: ImportResource, log: ProgressLog, revision?: Revision) {
  return (identity: string, index: number): RowState | undefined =>
    recorded(log, identity) ??
    (revision?.keys === 'file-and-row'
      ? { kind: 'in-doubt', key: fileRowKey(resource, revision.sha256, index + 1) }
      : undefined);
}

/** The key a row is sent under: an earlier request's, when the row may have been sent before, else its own. */
export function keyFor(resource: ImportResource, log: ProgressLog, row: IdentifiedRow, state: RowState): string {
  if (state.kind === 'in-doubt') return state.key;
  if (state.kind === 'rejected') return state.entry.key;
  return contentKey(resource, log.header.importId, row);
}
