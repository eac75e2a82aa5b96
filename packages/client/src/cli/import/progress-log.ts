/**
 * The local progress log of an import, so that a re-run resumes it: JSON Lines beside the input file. The
 * first line names the file by its SHA-256; each further line records a row the service answered
 * definitely (created, replayed or rejected), written and flushed to disk before the next row starts. A
 * re-run skips the rows recorded as created and sends every other row again under its own key, so a row
 * in flight when the run was killed is replayed by the service, not created twice.
 */
import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { ImportResource } from './rows.js';

export interface LogHeader {
  kind: 'svc-import-progress';
  version: 1;
  resource: ImportResource;
  file: string;
  sha256: string;
  rows: number;
  createdAt: string;
}

export type RowOutcome =
  | { row: number; key: string; outcome: 'created'; id: string; replayed: boolean }
  | { row: number; key: string; outcome: 'rejected'; status: number; type: string; detail: string };

export class ProgressLogMismatch extends Error {}

export class ProgressLog {
  /** Rows already created (by an earlier run or this one), with their resource ids. */
  readonly created = new Map<number, string>();
  private fd: number | undefined;

  private constructor(readonly path: string) {}

  /**
   * Opens the log, creating it with `header` when absent. An existing log must be for the same file
   * content and resource: a changed file renumbers nothing safely, so it is refused.
   */
  static open(path: string, header: LogHeader): ProgressLog {
    const log = new ProgressLog(path);
    if (existsSync(path)) {
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n');
      const first = parseLine(lines[0] ?? '') as LogHeader | undefined;
      if (first?.kind !== 'svc-import-progress')
        throw new ProgressLogMismatch(`${path} is not an svc import progress log`);
      if (first.sha256 !== header.sha256 || first.resource !== header.resource) {
        throw new ProgressLogMismatch(
          `${path} belongs to another import (${first.resource} of a file with SHA-256 ${first.sha256.slice(0, 12)}…; this is ${header.resource}, ${header.sha256.slice(0, 12)}…). ` +
            'The input changed since that run: put corrections in a new file, or name a fresh --progress log to start over.',
        );
      }
      // A line cut short by a kill is ignored: its row was not recorded, so it is sent again under its key.
      for (const line of lines.slice(1)) {
        const entry = parseLine(line) as RowOutcome | undefined;
        if (entry?.outcome === 'created') log.created.set(entry.row, entry.id);
      }
      log.fd = openSync(path, 'a');
      // End a line cut short by a kill, so the next entry starts a line of its own.
      if (text.length > 0 && !text.endsWith('\n')) writeSync(log.fd, '\n');
    } else {
      log.fd = openSync(path, 'a');
      log.write(header);
    }
    return log;
  }

  record(outcome: RowOutcome): void {
    this.write(outcome);
    if (outcome.outcome === 'created') this.created.set(outcome.row, outcome.id);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(entry: object): void {
    writeSync(this.fd!, `${JSON.stringify(entry)}\n`);
    fdatasyncSync(this.fd!);
  }
}

function parseLine(line: string): unknown {
  if (line.trim() === '') return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}
