/**
 * The integrator's first mistakes with the base address: the reference's paths start with /api/v1, so a base
 * that ends in it (`http://host/api/v1`) would send every request to `/api/v1/api/v1/…` and read 404 "No
 * resource lives at…"; a wrong host or port fails on the network, and the error must name the address tried.
 * The service hands out absolute URLs (a return label's `url`): getRaw and svc get take them when they lie under
 * the base address, and refuse any other before sending the token anywhere.
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, NetworkError } from '@site-services/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, svcEnv } from '../helpers/client.js';
import { recordedSleeps, recordingFetch } from '../helpers/client-fakes.js';
import { pdfBytes } from '../helpers/multipart.js';
import { createTenant, type TestTenant } from '../helpers/tenants.js';
import { visitBody, visitTenant } from '../helpers/visits.js';
import { runSvcInProcess } from './svc-in-process.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(async () => t?.close());

it('createClient refuses a base address ending in /api/v1, naming the one to give; a path prefix of a proxy is fine', async () => {
  for (const baseUrl of [`${t.baseUrl}/api/v1`, `${t.baseUrl}/api/v1/`]) {
    expect(() => createClient({ baseUrl, clientId: tenant.clientId, clientSecret: tenant.clientSecret })).toThrow(
      new TypeError(
        `the base address ends in /api/v1, which every path already starts with: give ${t.baseUrl} ` +
          '(the address without /api/v1, as `baseUrl` of the credential packet)',
      ),
    );
  }
  expect(() => createClient({ baseUrl: 'localhost:3000', clientId: 'c', clientSecret: 's' })).toThrow(TypeError);
  createClient({ baseUrl: `${t.baseUrl}/ss`, clientId: 'c', clientSecret: 's' });
  const client = clientFor(t, tenant, { baseUrl: `${t.baseUrl}/` });
  expect((await client.getRaw('/api/v1/sites')).status).toBe(200);
});

it('svc says which setting holds the wrong base address (exit 2), before sending anything', async () => {
  const requests: string[] = [];
  const run = await runSvcInProcess(t, ['token'], svcEnv(t, tenant, { SVC_BASE_URL: `${t.baseUrl}/api/v1` }), requests);
  expect(run.code).toBe(2);
  expect(run.stderr).toBe(
    `svc: SVC_BASE_URL: the base address ends in /api/v1, which every path already starts with: give ${t.baseUrl} ` +
      '(the address without /api/v1, as `baseUrl` of the credential packet)\n',
  );
  const file = path.join(os.tmpdir(), `credentials-${process.pid}-${Date.now()}.json`);
  writeFileSync(
    file,
    JSON.stringify({ baseUrl: `${t.baseUrl}/api/v1`, client_id: tenant.clientId, client_secret: tenant.clientSecret }),
  );
  const { SVC_BASE_URL: _base, ...env } = svcEnv(t, tenant, { SVC_CREDENTIALS_FILE: file });
  const fromFile = await runSvcInProcess(t, ['token'], env, requests).finally(() => rmSync(file));
  expect(fromFile.code).toBe(2);
  expect(fromFile.stderr).toMatch(new RegExp(`^svc: baseUrl of ${file}: the base address ends in /api/v1`));
  expect(requests).toEqual([]);
});

it('a request that never reached the service names the whole address tried, not only its path', async () => {
  const { runtime } = recordedSleeps();
  const unreachable = recordingFetch(() => new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }));
  const client = clientFor(t, tenant, { fetch: unreachable.fetch, runtime, retry: { maxAttempts: 2 } });
  const error = await client.requestToken().catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(NetworkError);
  expect((error as NetworkError).path).toBe('/api/v1/oauth/token');
  expect((error as NetworkError).message).toBe(`POST ${t.baseUrl}/api/v1/oauth/token: fetch failed (ECONNREFUSED)`);
});

it('svc, when nothing answers at the base address, says so and which setting holds it (exit 3)', async () => {
  const closed = await freePort();
  const env = svcEnv(t, tenant, { SVC_BASE_URL: `http://127.0.0.1:${closed}` });
  const run = await runSvcInProcess(t, ['token'], env);
  expect(run.code).toBe(3);
  expect(run.stderr).toMatch(
    new RegExp(
      `^svc: POST http://127\\.0\\.0\\.1:${closed}/api/v1/oauth/token: fetch failed \\(ECONNREFUSED\\): is the service running at that address\\? \\(it is SVC_BASE_URL, or baseUrl of SVC_CREDENTIALS_FILE\\)$`,
      'm',
    ),
  );
});

it("getRaw and svc get take a file's url as the service gave it, and /api/v1 paths without the first slash", async () => {
  const v = await visitTenant(t);
  const client = clientFor(t, v);
  const visit = await client.siteVisits.create(visitBody(v) as Parameters<typeof client.siteVisits.create>[0]);
  const label = pdfBytes(1500);
  const given = new URL((await client.siteVisits.uploadReturnLabel(visit.id, label)).returnLabel.url);
  expect(given.pathname).toBe(`/api/v1/site-visits/${visit.id}/return-label`);
  // The url is built on PUBLIC_BASE_URL, which in a test app is the default (port 3000), not the port it listens
  // on: here the url as a service that listens where PUBLIC_BASE_URL says gives it.
  const url = `${t.baseUrl}${given.pathname}`;
  const raw = await client.getRaw(url);
  expect(raw.status).toBe(200);
  expect(Buffer.from(raw.body as Uint8Array).equals(label)).toBe(true);

  // svc get writes the file's bytes (a Uint8Array), which runSvcInProcess keeps as String(chunk): comma-separated.
  const requests: string[] = [];
  const byUrl = await runSvcInProcess(t, ['get', url], svcEnv(t, v), requests);
  expect(byUrl.code, byUrl.stderr).toBe(0);
  expect(Buffer.from(byUrl.stdout.split(',').map(Number)).equals(label)).toBe(true);
  const listed = await runSvcInProcess(t, ['get', 'api/v1/site-visits?page[size]=1'], svcEnv(t, v), requests);
  expect(listed.code, listed.stderr).toBe(0);
  expect(JSON.parse(listed.stdout)).toMatchObject({ data: [{ id: visit.id }] });
  expect(requests.filter((request) => request.startsWith('GET '))).toEqual([
    `GET /api/v1/site-visits/${visit.id}/return-label`,
    'GET /api/v1/site-visits',
  ]);
});

it('an absolute URL not under the base address is refused, nothing sent: by getRaw (TypeError) and svc get (exit 2)', async () => {
  const elsewhere = 'http://collector.example/api/v1/sites';
  const sent = recordingFetch(() => new Response('{}'));
  const client = clientFor(t, tenant, { fetch: sent.fetch });
  await expect(client.getRaw(elsewhere)).rejects.toThrow(
    new TypeError(
      `${elsewhere} is not under the client's base address ${t.baseUrl}, the only address its token is sent to: ` +
        'give its path (/api/v1/…), or a base address the service knows itself by (PUBLIC_BASE_URL)',
    ),
  );
  // Under the host but outside a base's path prefix is elsewhere too.
  const prefixed = clientFor({ ...t, baseUrl: `${t.baseUrl}/ss` }, tenant, { fetch: sent.fetch });
  await expect(prefixed.getRaw(`${t.baseUrl}/api/v1/sites`)).rejects.toThrow(TypeError);
  expect(sent.requests).toEqual([]);

  const requests: string[] = [];
  const run = await runSvcInProcess(t, ['get', elsewhere], svcEnv(t, tenant), requests);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(
    new RegExp(`^svc get: ${elsewhere.replaceAll('.', '\\.')} is not under the client's base address`),
  );
  expect(requests).toEqual([]);
});
