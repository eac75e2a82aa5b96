/** The error mapper answers a slow or stuck database (statement, lock or client timeout) 503, not 500. */
import type { FastifyError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { clientQueryTimeoutMs } from '../../../src/db/database.js';
import { toProblem } from '../../../src/http/error-handler.js';

const databaseError = (message: string, code?: string) =>
  Object.assign(new Error(message), code === undefined ? {} : { code }) as FastifyError;

describe('database timeouts', () => {
  it.each([
    ['statement_timeout (57014)', databaseError('canceling statement due to statement timeout', '57014')],
    ['lock_timeout (55P03)', databaseError('canceling statement due to lock timeout', '55P03')],
    ["pg's client query_timeout", databaseError('Query read timeout')],
  ])('%s is 503 service-unavailable with Retry-After', (_, error) => {
    const problem = toProblem(error);
    expect(problem?.slug).toBe('service-unavailable');
    expect(problem?.status).toBe(503);
    expect(problem?.headers['retry-after']).toBe('5');
    expect(problem?.detail).not.toMatch(/timeout|cancel/i);
  });

  it('leaves other errors alone', () => {
    expect(toProblem(databaseError('Query read timeout', '22P02'))).toBeUndefined();
    expect(toProblem(databaseError('syntax error', '42601'))).toBeUndefined();
  });

  it('waits a little longer on the client than the statement timeout', () => {
    expect(clientQueryTimeoutMs(30_000)).toBe(33_000);
    expect(clientQueryTimeoutMs(200)).toBe(1_200);
  });
});
