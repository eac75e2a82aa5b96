/**
 * The destination policy through the create endpoint (SPEC: Webhook subscriptions rules 3 and 4): a table
 * of named bad destinations, each refused with 422 naming targetUrl and the rule (or 503 for a temporary
 * DNS failure), public destinations accepted, and the test-only allow list limited to the port and
 * address rules. DNS answers come from an injected resolver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { HOSTILE_DNS_ALLOWED, REFUSED, tableResolver } from '../helpers/hostile-destinations.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { testWebhookConfig } from '../helpers/webhooks.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp({
    config: { webhook: { ...testWebhookConfig(8443), testAllowedDestinations: HOSTILE_DNS_ALLOWED } },
    resolver: tableResolver(),
  });
  token = (await tenantWithToken(t)).token;
});
afterAll(async () => t?.close());

function create(targetUrl: string) {
  return t.http.post('/api/v1/webhook-subscriptions', {
    token,
    json: { targetUrl, eventTypes: ['ticket.created'], secret: 'a secret of sixteen+' },
  });
}

describe('webhook destination policy', () => {
  it(`has at least 40 named bad destinations (${REFUSED.length})`, () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(40);
    expect(new Set(REFUSED.map(([name]) => name)).size).toBe(REFUSED.length);
  });

  it.each(REFUSED)('refuses %s (%s)', async (_name, targetUrl, message) => {
    const response = await create(targetUrl);
    expect(response.status).toBe(422);
    expect(response.body.type).toMatch(/validation-error$/);
    expect(Object.keys(response.body.errors)).toEqual(['targetUrl']);
    expect(response.body.errors.targetUrl.join(' ')).toMatch(message);
  });

  it.each([
    ['a DNS server failure', 'https://servfail.example/'],
    ['a DNS timeout', 'https://timeout.example/'],
  ])('answers 503 for %s', async (_name, targetUrl) => {
    const response = await create(targetUrl);
    expect(response.status).toBe(503);
    expect(response.body.type).toMatch(/service-unavailable$/);
    expect(response.body.detail).toMatch(/temporar/);
  });

  it.each([
    ['a public name', 'https://public.example/hooks/site-services?tenant=1'],
    ['a public IPv6-only name', 'https://public6.example/'],
    ['a name with public IPv4 and IPv6 answers', 'https://dual.example/'],
    ['an explicit :443', 'https://public.example:443/hook'],
    ['a public IPv4 literal', 'https://93.184.216.34/'],
    ['a public IPv6 literal', 'https://[2606:4700:4700::1111]/'],
    ['an IPv4-mapped public address', 'https://[::ffff:8.8.8.8]/'],
    ['an upper-case host', 'https://PUBLIC.EXAMPLE/hook'],
    ['the allow-listed test host and port', 'https://localhost:8443/hook'],
    ['an allow-listed name on its listed port', 'https://public.example:8443/hook'],
    ['an allow-listed IPv6 literal and port', 'https://[::1]:9443/hook'],
  ])('accepts %s', async (_name, targetUrl) => {
    const response = await create(targetUrl);
    expect(response.status).toBe(201);
    expect(response.body.data.targetUrl).toBe(targetUrl);
  });
});
