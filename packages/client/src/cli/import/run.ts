/**
 * `svc import`: one POST per row at a steady pace, each under its row's Idempotency-Key, every definite
 * answer recorded in the progress log before the next row, and a report of the rejected rows.
 *
 * Before any request the progress log settles what it can (matching.ts): rows created before are skipped,
 * rows refused for good and unchanged are reported again. A row changed since its creation is not sent: its
 * resource is read back at the same pace (read-back.ts) and the row reported up to date with it (recorded,
 * not read again) or with the fields to PATCH. Outcomes of a row sent: created (201, also a replay of an earlier attempt), rejected (a
 * definite 4xx: the row's data or references must be fixed), or the run stops (credentials or scope refused:
 * nothing will succeed; or temporary failures outlasted the retries: re-run to resume).
 */
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { SiteServicesClient } from '../../client.js';
import { UsageError } from '../credentials.js';
import {
  ApiError,
  CredentialsError,
  existingOf,
  NetworkError,
  type ProblemDetails,
  SiteServicesError,
} from '../../errors.js';
import type { Runtime } from '../../retry.js';
import { ProgressDisplay } from './display.js';
import { Pacer } from './pace.js';
import { type IdentifiedRow, identify, NATURAL_KEY } from './identity.js';
import { isKeyConflict, keyFor, type RowState, rowStates } from './matching.js';
import { ProgressLog, type RejectedEntry } from './progress-log.js';
import { type ReadBack, readBack } from './read-back.js';
import {
  changedRow,
  describeRejection,
  describeUpToDate,
  type ImportReport,
  isFinal,
  rejectedFromLog,
} from './report.js';
import { type ImportResource, readImportFile } from './rows.js';
import { UnknownTicket, withVisitId } from './visit-lookup.js';

export interface ImportOptions {
  resource: ImportResource;
  file: string;
  ratePerMinute: number;
  progressPath?: string;
  reportPath?: string;
  /** Send again the rows refused for good by an earlier run (report.ts isFinal) though they did not change. */
  retryRejected?: boolean;
}

export interface ImportDeps {
  client: SiteServicesClient;
  runtime: Runtime;
  /** Progress and notes (stderr). */
  progressOut: Writable;
  tty: boolean;
  /** Set when the run should stop after the row in flight (SIGINT). */
  stopRequested?: () => boolean;
}

const SUBRESOURCE = { sites: 'sites', 'site-visits': 'siteVisits', messages: 'messages' } as const;

export function defaultSidePath(file: string, suffix: string): string {
  return path.join(path.dirname(file), `${path.basename(file)}.${suffix}`);
}

export async function runImport(options: ImportOptions, deps: ImportDeps): Promise<ImportReport> {
  const { runtime, client } = deps;
  const { resource } = options;
  const input = readImportFile(resource, options.file);
  const reportPath = options.reportPath ?? defaultSidePath(options.file, 'report.json');
  // The report is written at the end: a --report in a directory that is not there failed (ENOENT) only after
  // every row had been sent, and the run looked failed.
  const reportDirectory = path.dirname(path.resolve(reportPath));
  if (!statSync(reportDirectory, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(
      `svc import: --report ${reportPath}: there is no directory ${reportDirectory}. Nothing was sent.`,
    );
  const progressLog = options.progressPath ?? defaultSidePath(options.file, 'progress.jsonl');
  const rows = identify(resource, input.rows);
  const file = { resource, file: path.basename(options.file), sha256: input.sha256, rows };
  const now = () => new Date(runtime.now()).toISOString();
  const log = ProgressLog.open(progressLog, { ...file, importId: randomBytes(8).toString('hex'), now: now() });
  const states = rowStates(resource, log, rows, input.sha256);
  if (log.revisions.at(-1)?.sha256 !== input.sha256)
    log.addRevision({ file: file.file, sha256: input.sha256, readAt: now(), rows: rows.map((row) => row.hash) });
  const startedAt = runtime.now();
  const report: ImportReport = {
    resource,
    file: options.file,
    sha256: input.sha256,
    progressLog,
    startedAt: now(),
    finishedAt: '',
    status: 'completed',
    rows: rows.length,
    alreadyCreated: 0,
    created: 0,
    replayed: 0,
    rejected: [],
    changed: [],
    upToDate: [],
  };
  // What the log settles before any request: created rows, rows refused for good, rows changed since whose
  // resource is unknown or was found up to date. The rest are sent, or read back (changed, with an id).
  const toDo: Array<{ row: IdentifiedRow; state: RowState }> = [];
  rows.forEach((row, index) => {
    const state = states[index]!;
    if (!row.body) toDo.push({ row, state });
    else if (state.kind === 'created') report.alreadyCreated++;
    else if (state.kind === 'up-to-date')
      report.upToDate.push({ row: row.row, line: row.line, id: state.id, checkedThisRun: false });
    else if (state.kind === 'changed' && state.id === null) report.changed.push(changedRow(resource, row, state));
    else if (state.kind === 'rejected' && isFinal(state.entry) && !options.retryRejected)
      report.rejected.push(rejectedFromLog(row, state.entry, true));
    else toDo.push({ row, state });
  });
  const settled = rows.length - toDo.length;
  const display = new ProgressDisplay(deps.progressOut, deps.tty);
  const pacer = new Pacer(options.ratePerMinute, runtime);
  const collection = client[SUBRESOURCE[resource]];
  const visitIds = new Map<string, string>();
  let doneThisRun = 0;
  // Rows sent or read back at the pace: the rate's count. A row refused before sending (unreadable, an unknown
  // ticket) takes no interval, and counted made the rate read above --rate (145/min at 99).
  let sentThisRun = 0;
  // Once the credentials may not read (403), the other changed rows are not read either: each would be refused.
  let readRefused: Extract<ReadBack, { kind: 'not-read' }> | undefined;
  const show = (force = false) =>
    display.update(
      {
        total: report.rows,
        done: settled + doneThisRun,
        created: report.alreadyCreated + report.created,
        rejected: report.rejected.length,
        doneThisRun: sentThisRun,
        startedAt,
        now: runtime.now(),
        intervalMs: pacer.intervalMs,
      },
      force,
    );
  const reject = (
    row: IdentifiedRow,
    key: string,
    problem: ProblemDetails | undefined,
    detail: string,
    title: string,
  ) => {
    const entry: RejectedEntry = {
      ...rowRef(row, key),
      outcome: 'rejected',
      status: problem?.status ?? 0,
      type: problem?.type ?? '',
      title: problem?.title ?? title,
      detail: problem?.detail ?? detail,
      ...(problem?.errors ? { errors: problem.errors } : {}),
    };
    const existing = problem && existingOf(problem);
    if (existing) entry.existing = existing;
    // Refused before any request (unreadable, unknown ticket): judged again next run, so not logged.
    if (problem) log.record(entry);
    if (isKeyConflict(entry)) {
      const changed = changedRow(resource, row, { kind: 'changed', id: null, matchedBy: 'key' });
      report.changed.push(changed);
      display.note(`row ${row.row} (line ${row.line}) ${changed.detail}`);
      return;
    }
    const rejected = rejectedFromLog(row, entry, false);
    if (!problem) Object.assign(rejected, { status: null, type: null, notSent: true });
    report.rejected.push(rejected);
    display.note(`row ${row.row} (line ${row.line}) rejected: ${describeRejection(rejected)}`);
  };
  /** Ends the run on what no later row would get past: credentials refused, failures that outlasted retries. */
  const endRun = (row: IdentifiedRow, error: unknown) => {
    report.status =
      error instanceof CredentialsError || (error instanceof ApiError && error.status === 403)
        ? 'refused'
        : 'interrupted';
    report.error = `row ${row.row}: ${error instanceof SiteServicesError || error instanceof NetworkError ? error.message : String(error)}`;
  };
  /** A changed row with its resource's id: read back, then up to date (recorded) or reported changed. */
  const check = async (row: IdentifiedRow, body: Record<string, unknown>, state: ChangedWithId) => {
    let result: ReadBack | undefined = readRefused;
    if (!result) {
      try {
        const sent = resource === 'messages' ? await withVisitId(body, client, visitIds, pacer) : body;
        result = await readBack(resource, collection, pacer, state.id, sent);
      } catch (error) {
        if (!(error instanceof UnknownTicket)) throw error;
        result = { kind: 'not-read', why: error.message };
      }
      sentThisRun++;
      if (result.kind === 'not-read' && result.refused) readRefused = result;
    }
    if (result.kind === 'up-to-date') {
      const field = NATURAL_KEY[resource];
      log.record({
        ...rowPlace(row),
        outcome: 'up-to-date',
        id: state.id,
        checkedAt: now(),
        ...(field && row.naturalKey ? { [field]: row.naturalKey } : {}),
      });
      const upToDate = { row: row.row, line: row.line, id: state.id, checkedThisRun: true };
      report.upToDate.push(upToDate);
      display.note(`row ${row.row} (line ${row.line}) ${describeUpToDate(upToDate)}`);
      return;
    }
    const changed = changedRow(resource, row, state, result);
    report.changed.push(changed);
    display.note(`row ${row.row} (line ${row.line}) ${changed.detail}`);
  };

  show(true);
  try {
    for (const { row, state } of toDo) {
      if (deps.stopRequested?.()) {
        report.status = 'stopped';
        break;
      }
      const key = keyFor(resource, log, row, state);
      if (!row.body) {
        reject(row, key, undefined, row.error ?? 'unreadable row', 'Unreadable row');
      } else if (state.kind === 'changed' && state.id !== null) {
        try {
          await check(row, row.body, { ...state, id: state.id });
        } catch (error) {
          endRun(row, error);
          break;
        }
      } else {
        try {
          const body = resource === 'messages' ? await withVisitId(row.body, client, visitIds, pacer) : row.body;
          await pacer.wait();
          sentThisRun++;
          log.record({ ...rowRef(row, key), outcome: 'sending' });
          const result = await collection.createWithDetails(body as never, { idempotencyKey: key });
          const field = NATURAL_KEY[resource];
          log.record({
            ...rowRef(row, key),
            outcome: 'created',
            id: result.resource.id,
            replayed: result.replayed,
            ...(field && row.naturalKey ? { [field]: row.naturalKey } : {}),
          });
          report.created++;
          if (result.replayed) report.replayed++;
        } catch (error) {
          if (error instanceof UnknownTicket) {
            reject(row, key, undefined, error.message, 'Visit not found');
          } else if (
            error instanceof ApiError &&
            error.status !== 401 &&
            error.status !== 403 &&
            error.status !== 429 &&
            error.status < 500
          ) {
            reject(row, key, error.problem, error.message, 'Rejected');
          } else {
            endRun(row, error);
            break;
          }
        }
      }
      doneThisRun++;
      show();
    }
  } finally {
    log.close();
  }
  show(true);
  display.finish();
  report.rejected.sort((a, b) => a.row - b.row);
  report.changed.sort((a, b) => a.row - b.row);
  report.upToDate.sort((a, b) => a.row - b.row);
  report.finishedAt = now();
  writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

type ChangedWithId = Extract<RowState, { kind: 'changed' }> & { id: string };

/** A row's line in the log without a key: a row nothing was sent for. */
const rowPlace = (row: IdentifiedRow) => ({ row: row.row, line: row.line, hash: row.hash, n: row.n });
const rowRef = (row: IdentifiedRow, key: string) => ({ ...rowPlace(row), key });
