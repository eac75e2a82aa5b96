/**
 * Optimistic concurrency (SPEC: Optimistic concurrency). `If-Match` carries the quoted ETag of a GET;
 * callers compare it against the version of the row they locked for update, which makes the
 * precheck a real check: of concurrent writers holding the same ETag exactly one succeeds.
 */
import { Type } from 'typebox';
import { Problem } from './problem.js';

export const IfMatchHeader = Type.Optional(
  Type.String({
    maxLength: 256,
    description: 'The quoted ETag of a GET, e.g. "3". A mismatch is 409 version-conflict.',
  }),
);

/** True when the header (a list of entity tags, or `*`) matches the current version by strong comparison. */
export function ifMatchSatisfied(header: string, currentVersion: number): boolean {
  const current = `"${currentVersion}"`;
  return header
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === '*' || tag === current);
}

/** Throws 409 version-conflict unless `If-Match` is absent or matches `currentVersion`. */
export function assertIfMatch(header: string | undefined, currentVersion: number): void {
  if (header === undefined || ifMatchSatisfied(header, currentVersion)) return;
  throw new Problem(
    'version-conflict',
    `If-Match ${header} does not match the current ETag "${currentVersion}". Read the resource again and reapply your change.`,
  );
}
