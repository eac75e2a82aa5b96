/**
 * What an import reports: the counts, each rejected row with its problem, each row changed since its
 * resource was created (with how that resource differs from it) and each such row its resource matches
 * now, on stdout at the end and in the report file.
 */
import type { ExistingResource } from '../../errors.js';
import type { RowState } from './matching.js';
import type { RejectedEntry } from './progress-log.js';
import type { ReadBack } from './read-back.js';
import type { ImportResource } from './rows.js';

export interface RejectedRow {
  row: number;
  line: number;
  idempotencyKey: string;
  status: number | null;
  type: string | null;
  title: string;
  detail: string;
  errors?: Record<string, string[]>;
  /** A duplicate (409 duplicate-resource): the resource that has the row's unique value already. */
  existing?: ExistingResource;
  /** Refused by an earlier run with this same content, for a reason only a change of the row can cure: not sent again. */
  notSentAgain?: true;
  /** Refused by svc before any request of its own (unreadable, an unknown ticket): `status` and `type` are null. */
  notSent?: true;
}

export interface ChangedRow {
  row: number;
  line: number;
  /** The resource the row created before it changed; null when only the key's conflict told it. */
  id: string | null;
  /** How the row was found to be that resource's: its natural key, its place in the file, or its key. */
  matchedBy: Extract<RowState, { kind: 'changed' }>['matchedBy'];
  /** The fields in which the resource, read back by this run, differs from the row. */
  differs?: string[];
  /** Why the resource was not compared with the row, when its id is known (not found, not readable). */
  notCompared?: string;
  detail: string;
}

/** A row changed since its resource was created that the resource matches (it was changed to the row since). */
export interface UpToDateRow {
  row: number;
  line: number;
  id: string;
  /** Read back by this run; otherwise an earlier run's reading, from the progress log. */
  checkedThisRun: boolean;
}

export type ImportStatus = 'completed' | 'stopped' | 'interrupted' | 'refused';

export interface ImportReport {
  resource: ImportResource;
  file: string;
  sha256: string;
  progressLog: string;
  startedAt: string;
  finishedAt: string;
  /** completed: every row answered; interrupted: temporary failures outlasted the retries (re-run);
   *  refused: credentials or scope refused (fix, then re-run); stopped: asked to stop (re-run). */
  status: ImportStatus;
  rows: number;
  /** Rows created by earlier runs (skipped now). */
  alreadyCreated: number;
  /** Rows created by this run; `replayed` of them were answered from an earlier attempt's key. */
  created: number;
  replayed: number;
  rejected: RejectedRow[];
  /** Rows changed since their resource was created: not sent (that would create a second one). */
  changed: ChangedRow[];
  /** Rows changed since their resource was created whose resource holds what they say: nothing to do. */
  upToDate: UpToDateRow[];
  /** Why the run ended early. */
  error?: string;
}

/**
 * A refusal the same row would meet again, whatever else changes: its data (400, 413, 415, 422) or a value
 * another resource holds (409 duplicate-resource). Others may pass later (404: a site or visit created since;
 * 409 invalid-project: the project made Active), so their rows are sent again.
 */
export function isFinal(entry: Pick<RejectedEntry, 'status' | 'type'>): boolean {
  return [400, 413, 415, 422].includes(entry.status) || entry.type.endsWith('/duplicate-resource');
}

export function rejectedFromLog(
  row: { row: number; line: number },
  entry: RejectedEntry,
  notSentAgain: boolean,
): RejectedRow {
  return {
    row: row.row,
    line: row.line,
    idempotencyKey: entry.key,
    status: entry.status,
    type: entry.type,
    title: entry.title,
    detail: entry.detail,
    ...(entry.errors ? { errors: entry.errors } : {}),
    ...(entry.existing ? { existing: entry.existing } : {}),
    ...(notSentAgain ? { notSentAgain: true as const } : {}),
  };
}

const NOUN: Record<ImportResource, string> = { sites: 'site', 'site-visits': 'site visit', messages: 'message' };
const LOOKUP: Record<ImportResource, string | undefined> = {
  sites: 'siteCode',
  'site-visits': 'clientTicketNumber',
  messages: undefined,
};

/**
 * What the integrator reads of a row changed since its resource was created, and what to do instead: from
 * `readBack`, how the resource differs from the row (the PATCH that makes it the row's, after which the
 * next run finds it up to date), or why it was not compared.
 */
export function changedRow(
  resource: ImportResource,
  row: { row: number; line: number; naturalKey?: string },
  state: Extract<RowState, { kind: 'changed' }>,
  readBack?: Exclude<ReadBack, { kind: 'up-to-date' }>,
): ChangedRow {
  const noun = NOUN[resource];
  const how =
    state.matchedBy === 'position'
      ? 'in the place of the row that created it'
      : state.matchedBy === 'key'
        ? "its key's earlier request, whose answer was lost"
        : `same ${state.matchedBy}`;
  const ref = { row: row.row, line: row.line, id: state.id, matchedBy: state.matchedBy };
  if (state.id === null) {
    const lookup = LOOKUP[resource];
    const find = lookup && row.naturalKey ? `svc get '${resource}?${lookup}=${row.naturalKey}'` : `svc get ${resource}`;
    const detail =
      `changed since its ${noun} was created (${how}; its id is unknown: find it with ${find}): not sent, ` +
      `which would create a second ${noun}; change that ${noun} with PATCH /api/v1/${resource}/{id}`;
    return { ...ref, detail };
  }
  const id = state.id;
  const another = `if this row is another ${noun}, import it from a file of its own`;
  const patch = `PATCH /api/v1/${resource}/${id}${state.matchedBy === 'position' ? `, or ${another}` : ''}`;
  const start = `changed since it was created as ${id} (${how}): not sent, which would create a second ${noun}; `;
  if (readBack?.kind === 'differs') {
    const fields = readBack.fields.join(', ');
    // A message stays on its visit: PATCH does not take siteVisitId.
    const action = readBack.fields.includes('siteVisitId')
      ? `${id} is a message of another visit: ${another}`
      : `change ${readBack.fields.length === 1 ? 'it' : 'them'} with ${patch}`;
    return { ...ref, differs: readBack.fields, detail: `${start}${id} differs from the row in ${fields}: ${action}` };
  }
  if (readBack?.kind === 'not-found')
    return { ...ref, notCompared: readBack.why, detail: `${start}${readBack.why}: ${another}` };
  const notCompared = readBack ? ` (not compared with the row: ${readBack.why})` : '';
  return {
    ...ref,
    ...(readBack ? { notCompared: readBack.why } : {}),
    detail: `${start}change ${id} with ${patch}${notCompared}`,
  };
}

export function describeRejection(row: RejectedRow): string {
  const slug = row.type ? row.type.slice(row.type.lastIndexOf('/') + 1) : row.title;
  // A row refused before any request (unreadable, unknown ticket) has no status: its title says why.
  const what = row.status === null ? `not sent (${row.title})` : `${row.status} ${slug}`;
  const fields = Object.entries(row.errors ?? {})
    .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
    .join(', ');
  const existing = row.existing ? ` (already exists as ${row.existing.id})` : '';
  const again = row.notSentAgain ? ' [unchanged since: not sent again]' : '';
  return `${what}: ${row.detail}${fields ? ` (${fields})` : ''}${existing}${again}`;
}

/** What the integrator reads of a changed row its resource matches, found so by this run. */
export function describeUpToDate(row: UpToDateRow): string {
  return `up to date: ${row.id} holds what the row says, changed since its creation; not read again`;
}

/**
 * What stdout gets at the end: the counts, then each rejected and each changed row, each row this run found
 * up to date, and where the files are.
 */
export function summary(report: ImportReport, reportPath: string): string {
  const changed = report.changed.length > 0 ? `changed since created ${report.changed.length}; ` : '';
  const upToDate = report.upToDate.length > 0 ? `up to date after a change ${report.upToDate.length}; ` : '';
  const lines = [
    `${report.resource}: ${report.rows} rows; created ${report.created} now (${report.replayed} answered from an earlier attempt), ` +
      `${report.alreadyCreated} before; rejected ${report.rejected.length}; ${changed}${upToDate}${report.status}`,
    ...report.rejected.map((row) => `  row ${row.row} (line ${row.line}): ${describeRejection(row)}`),
    ...report.changed.map((row) => `  row ${row.row} (line ${row.line}): ${row.detail}`),
    ...report.upToDate
      .filter((row) => row.checkedThisRun)
      .map((row) => `  row ${row.row} (line ${row.line}): ${describeUpToDate(row)}`),
    ...(report.error ? [`stopped early: ${report.error}`] : []),
    `report: ${reportPath}; progress log: ${report.progressLog}`,
  ];
  return `${lines.join('\n')}\n`;
}
