/**
 * Counts client-secret verifications (the token endpoint's hash) through the real function, to prove
 * that a refused request never reached it. In a test file:
 *
 *   vi.mock('../../src/lib/secrets.js', async (importOriginal) =>
 *     (await import('../helpers/secret-checks.js')).countingSecrets(importOriginal));
 *
 * and read `secretChecks.count`. Name that file `*.isolated.test.ts` (vitest.config.ts): the other files share
 * their worker's modules, which the mock would change for them.
 */
import type * as Secrets from '../../src/lib/secrets.js';

export const secretChecks = { count: 0 };

export async function countingSecrets(importOriginal: <T>() => Promise<T>): Promise<typeof Secrets> {
  const original = await importOriginal<typeof Secrets>();
  return {
    ...original,
    verifySecret: (...args: Parameters<typeof original.verifySecret>) => {
      secretChecks.count++;
      return original.verifySecret(...args);
    },
  };
}
