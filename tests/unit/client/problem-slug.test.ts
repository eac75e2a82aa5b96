import { describe, expect, it } from 'vitest';
import { problemSlug } from '../../../packages/client/src/errors.js';

describe('problemSlug', () => {
  it.each([
    ['https://example.com/problems/not-found', 'not-found'],
    ['https://example.com/problems/not-found/', 'not-found'],
    ['https://example.com/problems#rate-limited', 'rate-limited'],
    ['https://example.com/problems/conflict/#/#', 'conflict'],
    ['about:blank', 'about:blank'],
    ['', ''],
    ['///', ''],
  ])('%s → %s', (type, slug) => {
    expect(problemSlug(type)).toBe(slug);
  });

  // The pattern /[/#]+$/ was tried from every slash of a run and read the run to its end each time: 100,000
  // slashes before a last letter took 20 s. The walk back from the end reads each character once.
  it('reads a type with a long run of slashes inside at the cost of a short one', () => {
    const before = process.cpuUsage();
    expect(problemSlug(`https://x/${'/'.repeat(100_000)}b`)).toBe('b');
    expect(problemSlug(`https://x/a${'/#'.repeat(50_000)}`)).toBe('a');
    const used = process.cpuUsage(before);
    // CPU time, not wall time: a loaded machine slows it far less. Linear, this is well under a millisecond.
    expect((used.user + used.system) / 1000).toBeLessThan(200);
  });
});
