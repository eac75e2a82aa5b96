/**
 * Optimistic concurrency (SPEC: Optimistic concurrency). `If-Match` carries the quoted ETag of a GET;
 * callers compare it against the version of the row they locked for update, which makes the
 * precheck a real check: of concurrent writers holding the same ETag exactly one succeeds.
 */
import { Type } from 'typebox';
import { Problem } from './problem.js';

/**
 * An entity-tag list (RFC 9110 §13.1.1) or `*`. A bare `2` is malformed rather than a mismatch: a client
 * answered 409 would read the resource again and send the same unquoted value again.
 */
const ENTITY_TAGS = String.raw`^[ \t]*(\*|(W/)?"[\x21\x23-\x7e]*"([ \t]*,[ \t]*(W/)?"[\x21\x23-\x7e]*")*)[ \t]*$`;

export const IfMatchHeader = Type.Optional(
  Type.String({
    maxLength: 256,
    pattern: ENTITY_TAGS,
    description: 'the ETag of a GET as sent, with its quotes, such as "3"; a mismatch is 409 version-conflict',
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
