/**
 * `svc import`: one POST per row at a steady pace, each under its row's Idempotency-Key, every definite
 * answer recorded in the progress log before the next row, and a report of the rejected rows.
 *
 * Outcomes of a row: created (201, also a replay of an earlier attempt), rejected (a definite 4xx: the
 * row's data or references must be fixed), or the run stops (credentials or scope refused: nothing will
 * succeed; or temporary failures outlasted the retries: re-run to resume).
 */
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { SiteServicesClient } from '../../client.js';
import { UsageError } from '../credentials.js';
import { ApiError, CredentialsError, NetworkError, type ProblemDetails, SiteServicesError } from '../../errors.js';
import type { Runtime } from '../../retry.js';
import { ProgressDisplay } from './display.js';
import { Pacer } from './pace.js';
import { ProgressLog } from './progress-log.js';
import { type ImportResource, readImportFile, rowKey } from './rows.js';

export interface ImportOptions {
  resource: ImportResource;
  file: string;
  ratePerMinute: number;
  progressPath?: string;
  reportPath?: string;
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

export interface RejectedRow {
  row: number;
  line: number;
  idempotencyKey: string;
  status: number | null;
  type: string | null;
  title: string;
  detail: string;
  errors?: Record<string, string[]>;
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
  /** Why the run ended early. */
  error?: string;
}

const SUBRESOURCE = { sites: 'sites', 'site-visits': 'siteVisits', messages: 'messages' } as const;

export function defaultSidePath(file: string, suffix: string): string {
  return path.join(path.dirname(file), `${path.basename(file)}.${suffix}`);
}

export async function runImport(options: ImportOptions, deps: ImportDeps): Promise<ImportReport> {
  const { runtime } = deps;
  const input = readImportFile(options.resource, options.file);
  const reportPath = options.reportPath ?? defaultSidePath(options.file, 'report.json');
  // The report is written at the end: a --report in a directory that is not there failed (ENOENT) only after
  // every row had been sent, and the run looked failed.
  const reportDirectory = path.dirname(path.resolve(reportPath));
  if (!statSync(reportDirectory, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(
      `svc import: --report ${reportPath}: there is no directory ${reportDirectory}. Nothing was sent.`,
    );
  const progressLog = options.progressPath ?? defaultSidePath(options.file, 'progress.jsonl');
  const log = ProgressLog.open(progressLog, {
    kind: 'svc-import-progress',
    version: 1,
    resource: options.resource,
    file: path.basename(options.file),
    sha256: input.sha256,
    rows: input.rows.length,
    createdAt: new Date(runtime.now()).toISOString(),
  });
  const startedAt = runtime.now();
  const report: ImportReport = {
    resource: options.resource,
    file: options.file,
    sha256: input.sha256,
    progressLog,
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: '',
    status: 'completed',
    rows: input.rows.length,
    alreadyCreated: input.rows.filter((row) => log.created.has(row.row)).length,
    created: 0,
    replayed: 0,
    rejected: [],
  };
  const display = new ProgressDisplay(deps.progressOut, deps.tty);
  const pacer = new Pacer(options.ratePerMinute, runtime);
  const collection = deps.client[SUBRESOURCE[options.resource]];
  const visitIds = new Map<string, string>();
  let doneThisRun = 0;
  const show = (force = false) =>
    display.update(
      {
        total: report.rows,
        done: report.alreadyCreated + doneThisRun,
        created: report.alreadyCreated + report.created,
        rejected: report.rejected.length,
        doneThisRun,
        startedAt,
        now: runtime.now(),
        intervalMs: pacer.intervalMs,
      },
      force,
    );
  const reject = (
    row: { row: number; line: number },
    key: string,
    problem: ProblemDetails | undefined,
    detail: string,
    title = 'Unreadable row',
  ) => {
    const entry: RejectedRow = {
      row: row.row,
      line: row.line,
      idempotencyKey: key,
      status: problem?.status ?? null,
      type: problem?.type ?? null,
      title: problem?.title ?? title,
      detail: problem?.detail ?? detail,
      ...(problem?.errors ? { errors: problem.errors } : {}),
    };
    report.rejected.push(entry);
    log.record({
      row: row.row,
      key,
      outcome: 'rejected',
      status: entry.status ?? 0,
      type: entry.type ?? '',
      detail: entry.detail,
    });
    display.note(`row ${row.row} (line ${row.line}) rejected: ${describeRejection(entry)}`);
  };

  show(true);
  try {
    for (const row of input.rows) {
      if (log.created.has(row.row)) continue;
      if (deps.stopRequested?.()) {
        report.status = 'stopped';
        break;
      }
      const key = rowKey(options.resource, input.sha256, row.row);
      if (!row.body) {
        reject(row, key, undefined, row.error ?? 'unreadable row');
      } else {
        try {
          const body =
            options.resource === 'messages' ? await withVisitId(row.body, deps.client, visitIds, pacer) : row.body;
          await pacer.wait();
          const result = await collection.createWithDetails(body as never, { idempotencyKey: key });
          log.record({ row: row.row, key, outcome: 'created', id: result.resource.id, replayed: result.replayed });
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
            reject(row, key, error.problem, error.message);
          } else {
            report.status =
              error instanceof CredentialsError || (error instanceof ApiError && error.status === 403)
                ? 'refused'
                : 'interrupted';
            report.error = `row ${row.row}: ${error instanceof SiteServicesError || error instanceof NetworkError ? error.message : String(error)}`;
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
  report.finishedAt = new Date(runtime.now()).toISOString();
  writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

class UnknownTicket extends Error {}

/**
 * A message row may name its visit by the client's own ticket number (`clientTicketNumber`) instead of
 * `siteVisitId`: it is looked up (once per ticket, at the import's pace) and sent as `siteVisitId`, so the
 * body, and what its key stands for, is the same on every run.
 */
async function withVisitId(
  body: Record<string, unknown>,
  client: SiteServicesClient,
  cache: Map<string, string>,
  pacer: Pacer,
): Promise<Record<string, unknown>> {
  const { clientTicketNumber, ...rest } = body;
  if (typeof clientTicketNumber !== 'string' || 'siteVisitId' in body) return body;
  let visitId = cache.get(clientTicketNumber);
  if (visitId === undefined) {
    await pacer.wait();
    visitId = (await client.siteVisits.findByClientTicketNumber(clientTicketNumber))?.id;
    if (visitId === undefined)
      throw new UnknownTicket(`no site visit has clientTicketNumber ${JSON.stringify(clientTicketNumber)}`);
    cache.set(clientTicketNumber, visitId);
  }
  return { ...rest, siteVisitId: visitId };
}

export function describeRejection(row: RejectedRow): string {
  // A row refused before any request (unreadable, unknown ticket) has no problem type: its title says why.
  const slug = row.type ? row.type.slice(row.type.lastIndexOf('/') + 1) : row.title;
  const fields = Object.entries(row.errors ?? {})
    .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
    .join(', ');
  return `${row.status ?? '-'} ${slug}: ${row.detail}${fields ? ` (${fields})` : ''}`;
}
