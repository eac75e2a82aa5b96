/** The documents' `120 seconds`: written out as en-US number formatting would (the oracle here), without Intl. */
import { expect, it } from 'vitest';
import { requestTimeoutText } from '../../../src/http/openapi-implied.js';

it.each([
  1, 999, 1_000, 1_500, 2_500, 30_000, 120_000, 1_234, 1_000_000, 1_800_000, 123_456_789, 60_000_001, 9_999_999_999,
])('%i ms reads as toLocaleString would write it', (timeoutMs) => {
  const expected = `${(timeoutMs / 1000).toLocaleString('en-US', { maximumFractionDigits: 3 })} seconds`;
  expect(requestTimeoutText(timeoutMs)).toBe(expected);
});
