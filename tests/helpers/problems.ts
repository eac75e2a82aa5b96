/** Assertions on problem details (RFC 9457) as every error of the service is served. */
import { expect } from 'vitest';
import type { TestResponse } from './http.js';

/**
 * Asserts a problem response: status, `application/problem+json`, a type ending in `/<slug>`, and the
 * required members. With `fields`, the `errors` member names exactly those fields.
 */
export function expectProblem(
  response: TestResponse,
  status: number,
  slug: string,
  fields?: string[],
): Record<string, string[]> {
  expect(response.status, response.text).toBe(status);
  expect(response.contentType).toMatch(/^application\/problem\+json/);
  const body = response.body as Record<string, unknown>;
  expect(body.type).toMatch(new RegExp(`/problems/${slug}$`));
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  const errors = (body.errors ?? {}) as Record<string, string[]>;
  if (fields) expect(Object.keys(errors).sort()).toEqual([...fields].sort());
  return errors;
}

/** A validation problem (422 validation-error) naming exactly `fields`. */
export function expectInvalid(response: TestResponse, fields: string[]): Record<string, string[]> {
  return expectProblem(response, 422, 'validation-error', fields);
}

/** A token-endpoint error: `application/json`, the problem members, and OAuth's `error` and `error_description`. */
export function expectOAuthError(response: TestResponse, status: number, error: string, slug?: string): void {
  expect(response.status, response.text).toBe(status);
  expect(response.contentType).toMatch(/^application\/json/);
  const body = response.body as Record<string, unknown>;
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.type).toMatch(slug ? new RegExp(`/problems/${slug}$`) : /\/problems\/[a-z-]+$/);
  expect(response.headers.get('cache-control')).toBe('no-store');
}
