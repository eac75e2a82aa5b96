/**
 * The rate limit under a flood of spelled paths (issue 15 item 2): one address spends its budget of 100
 * requests, then floods the service from 12 connections with every spelling of the table shared with
 * tests/http/rate-limit-spellings.isolated.test.ts (percent-encoding, the absolute form, doubled slashes, dot
 * segments, case, malformed paths, the token endpoint with guessed secrets). Every request of the flood is
 * answered 429 with the rate-limit headers, no client secret is checked (counted through the real function),
 * the refusal metric counts each one, and an honest client at another address keeps getting tokens at its
 * usual speed. The addresses come from X-Forwarded-For (TRUST_PROXY on).
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { newSecret } from '../../src/lib/ids.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { pathSpellings, rawRequest, type Spelling } from '../helpers/raw-http.js';
import { secretChecks } from '../helpers/secret-checks.js';
import { createTenant, type TestTenant } from '../helpers/tenants.js';
import { reportFigure, scaled } from './lib/figures.js';

// Client secrets verified by the token endpoint, counted through the real function.
vi.mock('../../src/lib/secrets.js', async (importOriginal) =>
  (await import('../helpers/secret-checks.js')).countingSecrets(importOriginal),
);

const LIMIT = 100;
const ATTACKER = '203.0.113.66';
const HONEST = '198.51.100.7';
const CONNECTIONS = 12;
const FLOOD_MS = scaled(3_000, 15_000);
/** The honest client asks for a token this often: well below its own limit of 100 a minute. */
const HONEST_INTERVAL_MS = 400;

let t: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  t = await startTestApp({ config: { rateLimitPerMinute: LIMIT, trustProxy: true } });
  tenant = await createTenant(t);
});
afterAll(async () => t?.close());

const refusals = async () => (await t.metrics.rateLimitRefusals.get()).values[0]?.value ?? 0;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

it('a flood of spelled paths after the budget is spent: all refused, no secret checked, honest clients unharmed', async () => {
  const from = (address: string, spelling: Spelling) =>
    rawRequest(t.baseUrl, { ...spelling, headers: { ...spelling.headers, 'x-forwarded-for': address } });
  // Guesses: the tenant's client id with secrets of the generated shape that are not its secret (another
  // shape is refused before any check, so would prove nothing of the limit).
  const spellings = pathSpellings({ clientId: tenant.clientId, clientSecret: newSecret('secret') });
  const plain = spellings[0]!;
  const valid = pathSpellings(tenant).find((spelling) => spelling.name === 'token endpoint')!;
  for (let index = 0; index < LIMIT; index++) expect((await from(ATTACKER, plain)).status).toBe(401);

  // The honest client's token requests without a flood, for comparison.
  const quietMs: number[] = [];
  const quietChecks = secretChecks.count;
  for (let index = 0; index < 3; index++) {
    const started = performance.now();
    expect((await from(HONEST, valid)).status).toBe(200);
    quietMs.push(performance.now() - started);
  }
  // The count works: each of those checked a secret.
  expect(secretChecks.count - quietChecks).toBe(3);

  const refusedBefore = await refusals();
  const checksBefore = secretChecks.count;
  const deadline = Date.now() + FLOOD_MS;
  const unexpected: string[] = [];
  let sent = 0;
  let tokenGuesses = 0;
  const flooder = async (offset: number) => {
    for (let index = offset; Date.now() < deadline; index += CONNECTIONS) {
      const spelling = spellings[index % spellings.length]!;
      sent++;
      if (spelling.token) tokenGuesses++;
      const response: TestResponse = await from(ATTACKER, spelling);
      if (
        response.status !== 429 ||
        response.headers.get('x-ratelimit-remaining') !== '0' ||
        !response.headers.get('retry-after')
      )
        unexpected.push(`${spelling.name}: ${spelling.method} ${spelling.target} → ${response.status}`);
    }
  };
  const honestMs: number[] = [];
  const honestStatuses: number[] = [];
  const honest = async () => {
    while (Date.now() < deadline) {
      const started = performance.now();
      honestStatuses.push((await from(HONEST, valid)).status);
      honestMs.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, HONEST_INTERVAL_MS));
    }
  };
  await Promise.all([...Array.from({ length: CONNECTIONS }, (_, offset) => flooder(offset)), honest()]);

  const floodChecks = secretChecks.count - checksBefore - honestStatuses.length;
  const counted = (await refusals()) - refusedBefore;
  expect(unexpected.slice(0, 10)).toEqual([]);
  expect(floodChecks).toBe(0);
  expect(counted).toBe(sent);
  expect(honestStatuses.every((status) => status === 200)).toBe(true);
  reportFigure(
    'rate-limit',
    `budget of ${LIMIT} spent, then ${sent} requests in ${spellings.length} spellings over ${FLOOD_MS / 1000} s (${CONNECTIONS} connections): ` +
      `${sent - unexpected.length}/${sent} refused 429 with the rate-limit headers, ${floodChecks} client-secret checks (${tokenGuesses} token guesses), refusal metric +${counted}; ` +
      `honest token requests from another address ${honestStatuses.filter((status) => status === 200).length}/${honestStatuses.length} 200, ` +
      `p50 ${percentile(honestMs, 0.5).toFixed(0)} ms, max ${Math.max(...honestMs).toFixed(0)} ms (${percentile(quietMs, 0.5).toFixed(0)} ms without the flood)`,
  );
});
