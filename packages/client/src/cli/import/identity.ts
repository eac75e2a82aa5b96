/**
 * What a row of an import is, whatever its place in the file: its content (a hash of the create body as read,
 * members in any order) and which occurrence of that content it is (a file may hold the same row twice, and
 * means two resources). A row's Idempotency-Key is made of the import's id (its progress log's) and this
 * identity, so the same row sends the same key on every run, wherever it moved, and a corrected row sends
 * another: the service refuses a key reused with a different body (409 idempotency-conflict).
 *
 * Sites and site visits also have a natural key, the client's own unique value of the resource (siteCode,
 * clientTicketNumber): a row edited after its resource was created is found by it wherever it is.
 */
import { createHash } from 'node:crypto';
import type { ImportResource, ImportRow } from './rows.js';

/** The member whose value the service keeps unique per client, if the resource has one. */
export const NATURAL_KEY: Record<ImportResource, 'siteCode' | 'clientTicketNumber' | undefined> = {
  sites: 'siteCode',
  'site-visits': 'clientTicketNumber',
  // A message row's clientTicketNumber names its visit, which has many messages.
  messages: undefined,
};

/** A row as the import follows it: its place in the file, its identity and its natural key's value. */
export interface IdentifiedRow extends ImportRow {
  /** The content's hash (16 hex digits) and its occurrence in the file, from 1: `hash#n`. */
  identity: string;
  hash: string;
  n: number;
  naturalKey?: string;
}

/** JSON with every object's members sorted: the same body however the file ordered its columns or keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function contentHash(row: ImportRow): string {
  const content = row.body ? canonical(row.body) : `unreadable\n${row.text ?? ''}`;
  return createHash('sha256').update(content).digest('hex').slice(0, 16);
}

export const identityOf = (hash: string, n: number) => `${hash}#${n}`;

/** Each row's identity: its hash, and the how-manieth row of that hash it is. */
export function identify(resource: ImportResource, rows: ImportRow[]): IdentifiedRow[] {
  const seen = new Map<string, number>();
  const field = NATURAL_KEY[resource];
  return rows.map((row) => {
    const hash = contentHash(row);
    const n = (seen.get(hash) ?? 0) + 1;
    seen.set(hash, n);
    const value = field ? row.body?.[field] : undefined;
    return {
      ...row,
      identity: identityOf(hash, n),
      hash,
      n,
      ...(typeof value === 'string' && value !== '' ? { naturalKey: value } : {}),
    };
  });
}

/** The Idempotency-Key of a row of this import (`importId`: the progress log's). */
export function contentKey(resource: ImportResource, importId: string, row: { hash: string; n: number }): string {
  return `svc-import:${resource}:${importId}:${row.hash}:${row.n}`;
}

/** The key svc import sent before progress logs had versions (version 1): the file's SHA-256 and row number. */
export function fileRowKey(resource: ImportResource, sha256: string, row: number): string {
  return `svc-import:${resource}:${sha256.slice(0, 32)}:${row}`;
}
