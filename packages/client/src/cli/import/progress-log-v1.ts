/**
 * Progress logs of version 1 (svc before fix-and-rerun): a header naming the file by its SHA-256, then a line
 * per answered row by its number, its key made of that SHA-256 and the number. Such a log is converted to
 * version 2 when the file is still the one it was written for: each row's line is given the row's identity,
 * and the revision is marked so that a row with no line of its own is sent under the key of its number, as
 * version 1 would have (the row in flight when that run was killed is then replayed, not created again). The
 * version 1 log is kept beside it (`<log>.v1`). A changed file cannot be matched to a log that never
 * recorded what its rows were, so it is refused, saying how to go on.
 */
import { closeSync, copyFileSync, fdatasyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { type IdentifiedRow, NATURAL_KEY } from './identity.js';
import type { LogHeader, Revision, RowEntry } from './progress-log.js';
import type { ImportResource } from './rows.js';

/** The file a run reads, as the log needs it. */
export interface CurrentFile {
  resource: ImportResource;
  /** The file's name, without its directory. */
  file: string;
  sha256: string;
  rows: IdentifiedRow[];
}

interface Version1Header {
  version: 1;
  resource: ImportResource;
  sha256: string;
  createdAt: string;
}
type Version1Entry =
  | { row: number; key: string; outcome: 'created'; id: string; replayed: boolean }
  | { row: number; key: string; outcome: 'rejected'; status: number; type: string; detail: string };

/** The version 2 text of the version 1 log at `path` (written in its place), or why it is refused. */
export function convertVersion1(
  path: string,
  text: string,
  current: CurrentFile & { importId: string; now: string },
): { text: string } | { refused: string } {
  const [first = '', ...rest] = text.split('\n');
  const old = JSON.parse(first) as Version1Header;
  if (old.sha256 !== current.sha256)
    return {
      refused:
        `${path} was written by an earlier svc (progress log version 1), which recorded rows by their number in ` +
        `the file as it was then (SHA-256 ${old.sha256.slice(0, 12)}…); ${current.file} has changed since, and its ` +
        'rows cannot be matched to that log safely. Put the file back as it was and run the same command: it ' +
        'finishes that import and converts the log; then correct the file and run it again.',
    };
  const backup = `${path}.v1`;
  const header: LogHeader = {
    kind: 'svc-import-progress',
    version: 2,
    resource: current.resource,
    importId: current.importId,
    createdAt: old.createdAt,
    convertedFrom: backup,
  };
  const revision: Revision = {
    revision: 1,
    file: current.file,
    sha256: current.sha256,
    readAt: current.now,
    rows: current.rows.map((row) => row.hash),
    keys: 'file-and-row',
  };
  const lines: object[] = [header, revision];
  for (const line of rest) {
    const entry = parse(line);
    const row = entry && current.rows[entry.row - 1];
    // A row refused before any request (status 0: unreadable, unknown ticket) is judged again on every run.
    if (!entry || !row || (entry.outcome === 'rejected' && !entry.status)) continue;
    const ref = { row: row.row, line: row.line, hash: row.hash, n: row.n, key: entry.key };
    const field = NATURAL_KEY[current.resource];
    const converted: RowEntry =
      entry.outcome === 'created'
        ? {
            ...ref,
            outcome: 'created',
            id: entry.id,
            replayed: entry.replayed,
            ...(field && row.naturalKey ? { [field]: row.naturalKey } : {}),
          }
        : {
            ...ref,
            outcome: 'rejected',
            status: entry.status,
            type: entry.type,
            title: entry.type.slice(entry.type.lastIndexOf('/') + 1),
            detail: entry.detail,
          };
    lines.push(converted);
  }
  const converted = lines.map((line) => `${JSON.stringify(line)}\n`).join('');
  copyFileSync(path, backup);
  writeDurably(`${path}.tmp`, converted);
  renameSync(`${path}.tmp`, path);
  return { text: converted };
}

function parse(line: string): Version1Entry | undefined {
  try {
    const entry = JSON.parse(line) as Version1Entry;
    return typeof entry?.row === 'number' && typeof entry.key === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}

function writeDurably(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
