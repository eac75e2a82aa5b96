import { describe, expect, it } from 'vitest';
import { problemResponses } from '../../../src/http/schemas.js';

/** The "Problem types: …" list of a status's description. */
function listed(response: unknown): string | undefined {
  return /Problem types: (.*)\.$/.exec((response as { description: string }).description)?.[1];
}

describe('problemResponses', () => {
  it('lists the one type of a status that has one', () => {
    expect(listed(problemResponses([404])[404])).toBe('not-found');
  });

  it('lists only validation-error for a 422 unless the route names more', () => {
    expect(listed(problemResponses([422])[422])).toBe('validation-error');
    expect(listed(problemResponses([422], {}, {}, { 422: ['subscription-limit-reached'] })[422])).toBe(
      'validation-error, subscription-limit-reached',
    );
  });

  it('lists the 409 types the route names, and refuses a 409 that names none', () => {
    expect(listed(problemResponses([409], {}, {}, { 409: ['version-conflict'] })[409])).toBe('version-conflict');
    expect(() => problemResponses([409])).toThrow(/a route answering 409 names its problem types/);
  });

  it('lists a sandbox-only type only where a route names it', () => {
    expect(listed(problemResponses([422], {}, {}, { 422: ['listener-limit-reached'] })[422])).toBe(
      'validation-error, listener-limit-reached',
    );
  });
});
