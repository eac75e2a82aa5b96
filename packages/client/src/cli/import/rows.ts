/**
 * The rows of an import file: CSV with a header row naming the fields, or JSON Lines (one object per
 * line). Row numbers count data records from 1 (the CSV header and blank lines are not rows), for the report;
 * a row's Idempotency-Key comes from its content (identity.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CsvError, parse } from 'csv-parse/sync';
import { UsageError } from '../credentials.js';
import { closest } from '../suggest.js';
import { CREATE_FIELDS } from './fields.js';

export const RESOURCES = ['sites', 'site-visits', 'messages'] as const;
export type ImportResource = (typeof RESOURCES)[number];

export interface ImportRow {
  /** 1-based number of the data record. */
  row: number;
  /** The physical line it starts on, for people fixing the file. */
  line: number;
  body?: Record<string, unknown>;
  /** Why the row could not be read (it is reported as rejected without a request). */
  error?: string;
  /** An unreadable row's text, which tells it apart from another unreadable row (identity.ts). */
  text?: string;
}

export interface ImportFile {
  sha256: string;
  rows: ImportRow[];
}

/**
 * CSV cells are text; these members are not, in the create bodies (the OpenAPI document's schemas). An
 * empty cell leaves the member out. A boolean cell is `true`, `false`, `yes` or `no` in any case, and
 * anything else makes the row an error reported here, never sent: a guess (is `maybe` or `2` true?) would
 * create a record the file did not mean. Other cells that cannot be read as their type are sent as
 * written, for the service to refuse with a problem naming the field.
 */
const BOOLEAN_FIELDS: Record<ImportResource, string[]> = {
  sites: ['keyRequired'],
  'site-visits': ['arePartsRequired', 'partsReturnRequired'],
  messages: ['buyer', 'clientContacts'],
};
const TRUE = new Set(['true', 'yes']);
const FALSE = new Set(['false', 'no']);

/** A cell that cannot be read: the whole row is reported with this message and not sent. */
class CellError extends Error {}

function csvValue(resource: ImportResource, field: string, text: string): unknown {
  if (BOOLEAN_FIELDS[resource].includes(field)) {
    const lower = text.trim().toLowerCase();
    if (TRUE.has(lower)) return true;
    if (FALSE.has(lower)) return false;
    throw new CellError(`${field}: ${JSON.stringify(text)} is not a boolean (write true, false, yes or no)`);
  }
  if (resource === 'site-visits' && field === 'projectId')
    return /^[0-9]{1,15}$/.test(text.trim()) ? Number(text) : text;
  if (resource === 'site-visits' && field === 'siteAssetIds') {
    // A JSON array, or integers separated by semicolons or spaces (`123;456`).
    if (text.trim().startsWith('[')) return JSON.parse(text) as unknown;
    return text
      .split(/[;\s]+/)
      .filter(Boolean)
      .map((part) => (/^[0-9]{1,15}$/.test(part) ? Number(part) : part));
  }
  return text;
}

/** A name that is not a field of the resource, with the field it most likely meant. */
function describeUnknown(name: string, fields: readonly string[]): string {
  const guess = closest(name, fields);
  return `${JSON.stringify(name)}${guess ? ` (did you mean ${guess}?)` : ''}`;
}

/** The refusal of a file naming `named` (described unknown names), before anything is sent. */
function unknownFieldsError(resource: ImportResource, where: string, named: string[]): UsageError {
  const fields: readonly string[] = CREATE_FIELDS[resource];
  return new UsageError(
    `svc import ${resource}: ${where} names ${named.join(', ')}, not ${named.length === 1 ? 'a field' : 'fields'} ` +
      `of ${resource}; nothing was sent. Its fields: ${fields.join(', ')}`,
  );
}

/**
 * Refuses a CSV header naming a column the resource does not have, before any row is sent (every row would be
 * refused for it). Empty column names are allowed: their cells are left out, as an empty cell is.
 */
function checkHeader(resource: ImportResource, file: string, text: string): void {
  const [header = []] = parse(text, { bom: true, to_line: 1 }) as string[][];
  const fields: readonly string[] = CREATE_FIELDS[resource];
  const unknown = header.filter((column) => column !== '' && !fields.includes(column));
  if (unknown.length === 0) return;
  const named = unknown.map((column) =>
    // `name;siteCode`: a file written with another separator is one column.
    /[;\t]/.test(column)
      ? `${JSON.stringify(column)} (columns are separated by commas)`
      : describeUnknown(column, fields),
  );
  throw unknownFieldsError(resource, `the header of ${file}`, named);
}

/**
 * The JSON Lines counterpart of checkHeader: a key that is not a field of the resource, on any line, refuses
 * the file before any row is sent. A file exported with a misspelt key has it on every line, and each line
 * would be a 422 at the import's pace. Each unknown key is named once, with the first line that has it.
 */
function checkJsonKeys(resource: ImportResource, file: string, rows: ImportRow[]): void {
  const fields: readonly string[] = CREATE_FIELDS[resource];
  const unknown = new Map<string, { line: number; more: number }>();
  for (const { body, line } of rows)
    for (const key of Object.keys(body ?? {})) {
      if (fields.includes(key)) continue;
      const seen = unknown.get(key);
      if (seen) seen.more++;
      else unknown.set(key, { line, more: 0 });
    }
  if (unknown.size === 0) return;
  const named = [...unknown].map(
    ([key, { line, more }]) =>
      `${describeUnknown(key, fields)} on line ${line}${more > 0 ? ` (and ${more} more ${more === 1 ? 'line' : 'lines'})` : ''}`,
  );
  throw unknownFieldsError(resource, file, named);
}

function csvRows(resource: ImportResource, text: string): ImportRow[] {
  const records = parse(text, {
    bom: true,
    columns: true,
    skip_empty_lines: true,
    info: true,
    relax_column_count: false,
  }) as Array<{
    record: Record<string, string>;
    info: { lines: number };
  }>;
  let previousEnd = 1;
  return records.map(({ record, info }, index) => {
    const line = previousEnd + 1;
    previousEnd = info.lines;
    try {
      const body: Record<string, unknown> = {};
      for (const [field, cell] of Object.entries(record)) {
        if (cell === '' || field === '') continue;
        body[field] = csvValue(resource, field, cell);
      }
      return { row: index + 1, line, body };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        row: index + 1,
        line,
        error: error instanceof CellError ? reason : `cannot read the row: ${reason}`,
        text: JSON.stringify(record),
      };
    }
  });
}

function jsonLinesRows(text: string): ImportRow[] {
  const rows: ImportRow[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((content, index) => {
      if (content.trim() === '') return;
      const row = { row: rows.length + 1, line: index + 1 };
      try {
        const body = JSON.parse(content) as unknown;
        if (!body || typeof body !== 'object' || Array.isArray(body))
          rows.push({ ...row, error: 'the line is not a JSON object', text: content });
        else rows.push({ ...row, body: body as Record<string, unknown> });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        rows.push({ ...row, error: `the line is not JSON: ${reason}`, text: content });
      }
    });
  return rows;
}

const FORMATS =
  'a .csv file has a header row of field names separated by commas; a .jsonl file holds one create body per line';

/**
 * A file svc import cannot read is refused before any row is sent, saying why and what it reads. A `.json`
 * file (an array, most likely) and a CSV csv-parse refuses (a stray quote) were read as CSV and ended in
 * csv-parse's CsvError and its stack.
 */
function unreadable(file: string, text: string, error?: CsvError): UsageError {
  const why = error ? `is not CSV svc import can read (${error.message})` : 'is JSON, which svc import does not read';
  const jsonl = `${file.replace(/\.[^./\\]+$/, '')}.jsonl`;
  const start = /^\uFEFF?\s*([[{])/.exec(text)?.[1];
  const hint =
    start === '['
      ? ` (from a JSON array: jq -c '.[]' ${file} > ${jsonl})`
      : start === '{'
        ? ` (JSON objects one per line are JSON Lines: name the file ${jsonl})`
        : '';
  return new UsageError(`svc import: ${file} ${why}; ${FORMATS}${hint}. Nothing was sent.`);
}

/** The file's bytes; a directory or a file this user may not read is said as such (EISDIR was a stack). */
function readFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EISDIR') throw new UsageError(`svc import: ${file} is a directory; name the file to import`);
    if (code === 'EACCES' || code === 'EPERM') throw new UsageError(`svc import: ${file} cannot be read by this user`);
    throw error;
  }
}

/** Reads the whole file (its hash is its identity); `.jsonl`/`.ndjson` are JSON Lines, anything else CSV. */
export function readImportFile(resource: ImportResource, file: string): ImportFile {
  const bytes = readFile(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const text = bytes.toString('utf8');
  const jsonLines = /\.(jsonl|ndjson)$/i.test(file);
  if (/\.json$/i.test(file)) throw unreadable(file, text);
  if (!jsonLines) {
    try {
      checkHeader(resource, file, text);
      return { sha256, rows: csvRows(resource, text) };
    } catch (error) {
      throw error instanceof CsvError ? unreadable(file, text, error) : error;
    }
  }
  const rows = jsonLinesRows(text);
  checkJsonKeys(resource, file, rows);
  return { sha256, rows };
}
