/**
 * The local progress log of an import, JSON Lines beside the input file (version 2). It is the import's
 * memory: a re-run of the same file resumes it, and a re-run of the file corrected in place (rows fixed,
 * added, moved or removed) goes on with it, nothing created twice.
 *
 *   {"kind":"svc-import-progress","version":2,"resource":"sites","importId":"…","createdAt":"…"}
 *   {"revision":1,"file":"sites.csv","sha256":"…","readAt":"…","rows":["<hash of row 1>",…]}
 *   {"row":1,"line":2,"hash":"…","n":1,"key":"svc-import:sites:…","outcome":"sending"}
 *   {"row":1,"line":2,"hash":"…","n":1,"key":"…","outcome":"created","id":"site_…","replayed":false,"siteCode":"S-1"}
 *   {"row":2,"line":3,"hash":"…","n":1,"key":"…","outcome":"rejected","status":422,"type":"…","title":"…","detail":"…"}
 *   {"row":3,"line":4,"hash":"…","n":1,"outcome":"up-to-date","id":"site_…","siteCode":"S-3","checkedAt":"…"}
 *
 * The header names the import (its id is part of every key). A revision line lists the rows of the file as
 * a run read it, each by its content's hash (identity.ts), whenever the content differs from the last
 * revision's: how the rows moved between two revisions is read from these lists (matching.ts). A row line
 * records what happened to a row by its identity (`hash`, `n`), `row` and `line` being its place in the
 * revision then: `sending` before its request (so a request whose answer was lost is known), then the
 * service's definite answer. Every line is written and flushed to disk before the next step. A line cut
 * short by a kill is ignored: its row was not recorded, so it is sent again under its key.
 *
 * `up-to-date` records a row changed after its resource was created whose resource, read back, held what the
 * row says (changed with PATCH since): nothing was sent, so the line has no key, and later runs neither send
 * nor read it. The missing key is also what keeps such a log readable by an svc before these lines: it skips
 * a row line without a key, and reports the row as changed as it always did.
 */
import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { ExistingResource } from '../../errors.js';
import { identityOf } from './identity.js';
import { convertVersion1, type CurrentFile } from './progress-log-v1.js';
import type { ImportResource } from './rows.js';

export const LOG_VERSION = 2;

export interface LogHeader {
  kind: 'svc-import-progress';
  version: typeof LOG_VERSION;
  resource: ImportResource;
  /** Random, made with the log: part of every row's key, so a fresh log is a fresh import. */
  importId: string;
  createdAt: string;
  /** Set when the log was converted from a version 1 log, kept at this path. */
  convertedFrom?: string;
}

export interface Revision {
  revision: number;
  file: string;
  sha256: string;
  readAt: string;
  /** Each row's content hash, in the file's order. */
  rows: string[];
  /** Converted from version 1: a row with no line of its own may have been sent under the key of its number. */
  keys?: 'file-and-row';
}

interface RowRef {
  row: number;
  line: number;
  hash: string;
  n: number;
  key: string;
}
export type CreatedEntry = RowRef & {
  outcome: 'created';
  id: string;
  replayed: boolean;
  siteCode?: string;
  clientTicketNumber?: string;
};
export type RejectedEntry = RowRef & {
  outcome: 'rejected';
  status: number;
  type: string;
  title: string;
  detail: string;
  errors?: Record<string, string[]>;
  /** A duplicate's (409 duplicate-resource) existing resource. */
  existing?: ExistingResource;
};
/** A changed row its resource matched when read back; no key: nothing was sent. */
export type UpToDateEntry = Omit<RowRef, 'key'> & {
  outcome: 'up-to-date';
  id: string;
  checkedAt: string;
  siteCode?: string;
  clientTicketNumber?: string;
};
export type RowEntry = (RowRef & { outcome: 'sending' }) | CreatedEntry | RejectedEntry | UpToDateEntry;
/** A row line naming its resource: created by the row, or up to date with it. */
export type ResourceEntry = CreatedEntry | UpToDateEntry;

export class ProgressLogMismatch extends Error {}

export class ProgressLog {
  readonly revisions: Revision[] = [];
  /** Each identity's latest line, but that a created row stays created. */
  private readonly latest = new Map<string, RowEntry>();
  private fd: number | undefined;

  private constructor(
    readonly path: string,
    readonly header: LogHeader,
  ) {}

  /**
   * Opens the log, creating it when absent. A log of another resource is refused; a version 1 log is
   * converted when the file is the one it was written for, and refused otherwise (progress-log-v1.ts).
   */
  static open(path: string, current: CurrentFile & { importId: string; now: string }): ProgressLog {
    if (!existsSync(path)) {
      const log = new ProgressLog(path, {
        kind: 'svc-import-progress',
        version: LOG_VERSION,
        resource: current.resource,
        importId: current.importId,
        createdAt: current.now,
      });
      log.fd = openSync(path, 'a');
      log.write(log.header);
      return log;
    }
    let text = readFileSync(path, 'utf8');
    let lines = text.split('\n');
    // Any version's header: its kind, version and resource are read before anything else.
    let header = parseLine(lines[0] ?? '') as { kind?: string; version?: number; resource?: string } | undefined;
    if (header?.kind !== 'svc-import-progress')
      throw new ProgressLogMismatch(`${path} is not an svc import progress log`);
    if (header.resource !== current.resource)
      throw new ProgressLogMismatch(
        `${path} is the progress log of an import of ${header.resource}, not ${current.resource}: name another --progress log`,
      );
    if (header.version === 1) {
      const converted = convertVersion1(path, text, current);
      if ('refused' in converted) throw new ProgressLogMismatch(converted.refused);
      text = converted.text;
      lines = text.split('\n');
      header = parseLine(lines[0]!) as LogHeader;
    } else if (header.version !== LOG_VERSION) {
      throw new ProgressLogMismatch(
        `${path} is a progress log of version ${header.version}, written by a newer svc than this one (it reads version ${LOG_VERSION}): run the import with that svc`,
      );
    }
    const log = new ProgressLog(path, header as LogHeader);
    for (const line of lines.slice(1)) log.remember(parseLine(line) as RowEntry | Revision | undefined);
    log.fd = openSync(path, 'a');
    // End a line cut short by a kill, so the next entry starts a line of its own.
    if (text.length > 0 && !text.endsWith('\n')) writeSync(log.fd, '\n');
    return log;
  }

  /** The identity's latest line (a created one once there is one). */
  entryOf(identity: string): RowEntry | undefined {
    return this.latest.get(identity);
  }

  /** The line of each row created, or up to date with its resource, in the order of each row's first line. */
  resourceEntries(): ResourceEntry[] {
    return [...this.latest.values()].filter(
      (entry): entry is ResourceEntry => entry.outcome === 'created' || entry.outcome === 'up-to-date',
    );
  }

  /** The file as this run reads it, when it differs from the last revision. */
  addRevision(revision: Omit<Revision, 'revision'>): void {
    const line = { revision: this.revisions.length + 1, ...revision };
    this.write(line);
    this.remember(line);
  }

  record(entry: RowEntry): void {
    this.write(entry);
    this.remember(entry);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private remember(line: RowEntry | Revision | undefined): void {
    if (!line || typeof line !== 'object') return;
    if ('revision' in line) {
      if (Array.isArray(line.rows)) this.revisions.push(line);
      return;
    }
    if (typeof line.hash !== 'string' || typeof line.n !== 'number') return;
    if (line.outcome === 'up-to-date' ? typeof line.id !== 'string' : typeof line.key !== 'string') return;
    const identity = identityOf(line.hash, line.n);
    if (this.latest.get(identity)?.outcome !== 'created') this.latest.set(identity, line);
  }

  private write(entry: object): void {
    writeSync(this.fd!, `${JSON.stringify(entry)}\n`);
    fdatasyncSync(this.fd!);
  }
}

export function parseLine(line: string): unknown {
  if (line.trim() === '') return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}
