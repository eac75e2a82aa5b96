/**
 * `svc import` rows the service refuses, unreadable rows, resuming, the three resources and exit codes.
 * `main` runs in this process (its output captured) against the test app; the child-process run is
 * import.kill.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FetchLike } from '@site-services/client';
import { runImport } from '../../packages/client/src/cli/import/run.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, svcEnv } from '../helpers/client.js';
import { runSvcInProcess } from './svc-in-process.js';
import { createTenant, siteBody, type TestTenant } from '../helpers/tenants.js';
import { visitBody, visitTenant } from '../helpers/visits.js';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-import-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

let fileCount = 0;
function file(name: string, content: string): string {
  const target = path.join(dir, `${++fileCount}-${name}`);
  writeFileSync(target, content);
  return target;
}

/** `svc` in this process against the test app (svc-in-process.ts). */
const svc = (args: string[], env: NodeJS.ProcessEnv, requests?: string[]) => runSvcInProcess(t, args, env, requests);

const fast = (tenant: TestTenant) => svcEnv(t, tenant, { SVC_ALLOW_RATE_ABOVE_LIMIT: '1' });
const jsonl = (rows: unknown[]) =>
  `${rows.map((row) => (typeof row === 'string' ? row : JSON.stringify(row))).join('\n')}\n`;

describe('rejected rows', () => {
  it('reports every rejected row with its problem, on screen and in the report file, and exits 1', async () => {
    const tenant = await createTenant(t);
    const existing = siteBody();
    const existingSite = await clientFor(t, tenant).sites.create(existing);
    const good = [siteBody(), siteBody()];
    const input = file(
      'sites.jsonl',
      jsonl([
        good[0],
        { ...siteBody(), postalCode: 62701 },
        '{not json',
        { ...siteBody(), siteCode: existing.siteCode },
        '',
        good[1],
      ]),
    );
    const run = await svc(['import', 'sites', input, '--rate', '60000'], fast(tenant));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('5 rows; created 2 now');
    expect(run.stdout).toContain('rejected 3');
    expect(run.stdout).toMatch(/row 2 \(line 2\): 422 validation-error: .*postalCode: must be a string/);
    expect(run.stdout).toMatch(/row 3 \(line 3\): not sent \(Unreadable row\): the line is not JSON/);
    expect(run.stdout).toMatch(/row 4 \(line 4\): 409 duplicate-resource/);
    expect(run.stdout).toContain(`(already exists as ${existingSite.id})`);

    const report = JSON.parse(readFileSync(`${input}.report.json`, 'utf8'));
    expect(report).toMatchObject({ status: 'completed', rows: 5, created: 2, alreadyCreated: 0 });
    expect(report.rejected.map((row: { row: number }) => row.row)).toEqual([2, 3, 4]);
    expect(report.rejected[0]).toMatchObject({
      status: 422,
      title: 'Validation failed',
      errors: { postalCode: [expect.any(String)] },
    });
    expect(report.rejected[0].type).toMatch(/\/validation-error$/);
    // Refused by svc itself: no status or problem type of the service's, and said so.
    expect(report.rejected[1]).toMatchObject({ status: null, type: null, title: 'Unreadable row', notSent: true });
    expect(report.rejected[0].notSent).toBeUndefined();
    expect(report.rejected[2]).toMatchObject({
      status: 409,
      line: 4,
      existing: { type: 'sites', id: existingSite.id },
    });

    // Again: the created rows are skipped; the rejected ones are reported again without a request (the
    // unreadable line is read again, the 422 and the duplicate are refused for what the row says).
    const requests: string[] = [];
    const again = await svc(
      ['import', 'sites', input, '--rate', '60000', '--report', path.join(dir, 'again.json')],
      fast(tenant),
      requests,
    );
    expect(again.code).toBe(1);
    expect(requests.filter((request) => request.startsWith('POST /api/v1/sites'))).toEqual([]);
    expect(again.stdout).toContain('created 0 now (0 answered from an earlier attempt), 2 before; rejected 3');
    expect(JSON.parse(readFileSync(path.join(dir, 'again.json'), 'utf8')).rejected).toHaveLength(3);
    const codes = [];
    for await (const site of clientFor(t, tenant).sites.list()) codes.push(site.attributes.siteCode);
    expect(codes.sort()).toEqual([existing.siteCode, good[0]!.siteCode, good[1]!.siteCode].sort());
  });
});

describe('resources and formats', () => {
  it('imports site visits from CSV (typed cells: numbers, booleans, asset id lists) and messages from JSON Lines, by visit id or ticket number', async () => {
    const v = await visitTenant(t, { assets: 2 });
    const body = visitBody(v);
    const ticket = `INC-${fileCount}-${Date.now()}`;
    const header =
      'clientSiteId,clientTicketNumber,description,serviceType,jobInstructions,projectId,itemName,startDate,dueDate,arePartsRequired,schedulingRule,siteAssetIds,trackingNumber';
    const row = [
      v.siteCode,
      ticket,
      '"Broken, badly"',
      body.serviceType,
      'Fix it',
      v.projectId,
      `"${v.itemName}"`,
      body.startDate,
      body.dueDate,
      'yes',
      body.schedulingRule,
      v.assetIds.join(';'),
      '',
    ];
    const visits = file('visits.csv', `${header}\n${row.join(',')}\n`);
    const run = await svc(['import', 'site-visits', visits, '--rate', '60000'], fast(v));
    expect(run.code, run.stdout + run.stderr).toBe(0);

    const client = clientFor(t, v);
    const visit = await client.siteVisits.findByClientTicketNumber(ticket);
    expect(visit?.attributes).toMatchObject({
      description: 'Broken, badly',
      arePartsRequired: true,
      trackingNumber: null,
    });
    expect(visit?.attributes.siteVisitAssets?.map((asset) => asset.siteAssetId).sort()).toEqual([...v.assetIds].sort());

    // Messages name their visit by id, or by the client's ticket number (looked up once).
    const messages = file(
      'messages.jsonl',
      jsonl([
        { siteVisitId: visit!.id, messageThread: 'Imported note', urgency: 'High' },
        { clientTicketNumber: ticket, messageThread: 'By ticket' },
        { clientTicketNumber: 'NOPE-1', messageThread: 'Lost' },
        { clientTicketNumber: ticket, messageThread: 'By ticket again' },
      ]),
    );
    const imported = await svc(['import', 'messages', messages, '--rate', '60000'], fast(v));
    expect(imported.code, imported.stdout).toBe(1);
    expect(imported.stdout).toContain(
      'row 3 (line 3): not sent (Visit not found): no site visit has clientTicketNumber "NOPE-1"',
    );
    const listed = [];
    for await (const message of client.messages.list()) listed.push(message.attributes);
    expect(listed).toMatchObject([
      { siteVisitId: visit!.id, messageThread: 'Imported note', urgency: 'High – Needs attention soon' },
      { siteVisitId: visit!.id, messageThread: 'By ticket' },
      { siteVisitId: visit!.id, messageThread: 'By ticket again' },
    ]);
  });
});

describe('CSV booleans', () => {
  it('reads true, false, yes and no in any case; any other value is a row error reported locally and never sent', async () => {
    const tenant = await createTenant(t);
    const [yes, no, maybe, upper] = [siteBody(), siteBody(), siteBody(), siteBody()];
    const header = 'name,siteCode,addressLine1,city,stateRegion,postalCode,country,keyRequired';
    const line = (site: ReturnType<typeof siteBody>, keyRequired: string) =>
      [
        site.name,
        site.siteCode,
        site.addressLine1,
        site.city,
        site.stateRegion,
        site.postalCode,
        site.country,
        keyRequired,
      ].join(',');
    const input = file(
      'booleans.csv',
      `${header}\n${line(yes, 'yes')}\n${line(no, 'No')}\n${line(maybe, 'maybe')}\n${line(upper, 'TRUE')}\n`,
    );
    const requests: string[] = [];
    const run = await svc(['import', 'sites', input, '--rate', '60000'], fast(tenant), requests);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('4 rows; created 3 now');
    expect(run.stdout).toContain(
      'row 3 (line 4): not sent (Unreadable row): keyRequired: "maybe" is not a boolean (write true, false, yes or no)',
    );
    expect(requests.filter((request) => request === 'POST /api/v1/sites')).toHaveLength(3);

    const created = new Map<string, boolean | null | undefined>();
    for await (const site of clientFor(t, tenant).sites.list())
      created.set(site.attributes.siteCode, site.attributes.keyRequired);
    expect(Object.fromEntries(created)).toEqual({ [yes.siteCode]: true, [no.siteCode]: false, [upper.siteCode]: true });
  });
});

describe('temporary failures', () => {
  it('retries a row under its key through 503s, stops when they outlast the retries, and resumes without duplicates', async () => {
    const tenant = await createTenant(t);
    const rows = [siteBody(), siteBody(), siteBody(), siteBody()];
    const input = file('flaky.jsonl', jsonl(rows));
    const keys: string[] = [];
    let outage = (_index: number) => false;
    const flaky: FetchLike = async (request) => {
      if (request.method !== 'POST' || !request.url.endsWith('/api/v1/sites')) return fetch(request);
      keys.push(request.headers.get('idempotency-key')!);
      if (outage(keys.length)) return new Response('{}', { status: 503, headers: { 'retry-after': '0' } });
      return fetch(request);
    };
    const sleeps: number[] = [];
    const deps = {
      client: clientFor(t, tenant, {
        fetch: flaky,
        retry: { maxAttempts: 3 },
        runtime: { sleep: async (ms: number) => void sleeps.push(ms) },
      }),
      runtime: { now: () => Date.now(), sleep: async () => undefined, random: () => 0.5 },
      progressOut: { write: () => true } as never,
      tty: false,
    };
    const options = { resource: 'sites' as const, file: input, ratePerMinute: 60_000 };

    // Row 2 meets one 503 and is created on the next attempt; row 3 meets nothing but 503s.
    outage = (attempt) => attempt === 2 || attempt >= 4;
    const first = await runImport(options, deps);
    expect(first).toMatchObject({ status: 'interrupted', created: 2, rejected: [] });
    expect(first.error).toMatch(/^row 3: POST \/api\/v1\/sites: 503/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[1], keys[1]]);
    expect(new Set(keys.slice(3)).size).toBe(1);
    expect(sleeps.length).toBeGreaterThanOrEqual(3);

    outage = () => false;
    const second = await runImport(options, deps);
    expect(second).toMatchObject({ status: 'completed', alreadyCreated: 2, created: 2, rejected: [] });
    const codes = [];
    for await (const site of clientFor(t, tenant).sites.list()) codes.push(site.attributes.siteCode);
    expect(codes).toEqual(rows.map((row) => row.siteCode));
  });
});

describe('usage and configuration (exit 2)', () => {
  it('refuses a pace above the limit without the test-only override, and nonsense paces', async () => {
    const tenant = { clientId: 'cli_x', clientSecret: 'secret_x' };
    const input = file('any.jsonl', jsonl([siteBody()]));
    const above = await svc(['import', 'sites', input, '--rate', '100'], svcEnv(t, tenant));
    expect(above.code).toBe(2);
    expect(above.stderr).toContain('above 99 per minute');
    expect(above.stderr).toContain('"Rate limit" in the API reference'); // a section integrators can read
    for (const rate of ['0', '-5', 'fast'])
      expect((await svc(['import', 'sites', input, '--rate', rate], svcEnv(t, tenant))).code).toBe(2);
  });

  it('takes credentials only from the environment or a credentials file, and stops on wrong ones', async () => {
    const input = file('creds.jsonl', jsonl([siteBody()]));
    const none = await svc(['import', 'sites', input], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('missing credentials: set SVC_BASE_URL, SVC_CLIENT_ID, SVC_CLIENT_SECRET');
    // And where the sandbox's packet is, which a newcomer in its checkout has at hand.
    expect(none.stderr).toContain('export SVC_CREDENTIALS_FILE=data/credentials.json');
    expect((await svc(['import', 'sites', input, '--client-secret', 'x'], {})).code).toBe(2);

    const tenant = await createTenant(t);
    const packet = file(
      'credentials.json',
      JSON.stringify({ baseUrl: t.baseUrl, client_id: tenant.clientId, client_secret: 'secret_wrong' }),
    );
    const wrong = await svc(['import', 'sites', input], { SVC_CREDENTIALS_FILE: packet });
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toContain('refused');
    expect(wrong.stdout).toContain('token request refused (401 invalid_client)');

    const right = file(
      'credentials-ok.json',
      JSON.stringify({ baseUrl: t.baseUrl, client_id: tenant.clientId, client_secret: tenant.clientSecret }),
    );
    // Bare, for `Authorization: Bearer $(svc token)`; --json the whole response.
    const token = await svc(['token'], { SVC_CREDENTIALS_FILE: right });
    expect(token.code).toBe(0);
    expect(token.stdout).toMatch(/^[A-Za-z0-9._~+/=-]+\n$/);
    const bearer = { authorization: `Bearer ${token.stdout.trim()}` };
    expect((await t.http.get('/api/v1/sites', { headers: bearer })).status).toBe(200);
    const json = await svc(['token', '--json'], { SVC_CREDENTIALS_FILE: right });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      token_type: 'Bearer',
      access_token: expect.any(String),
      expires_in: expect.any(Number),
    });
    expect((await svc(['get', 'sites', '--json'], { SVC_CREDENTIALS_FILE: right })).code).toBe(2);
    const get = await svc(['get', 'sites?page[size]=1'], { SVC_CREDENTIALS_FILE: right });
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout)).toMatchObject({ data: [], meta: { pageSize: 1 } });
    const missing = await svc(['get', '/api/v1/sites/site_nope'], { SVC_CREDENTIALS_FILE: right });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: 404 });
  });

  it('answers unknown commands, resources and missing files with the usage', async () => {
    for (const args of [[], ['frobnicate'], ['import', 'tenants', 'x.csv'], ['import', 'sites'], ['token', 'extra']]) {
      const run = await svc(args, {});
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('usage:');
    }
    const tenant = { clientId: 'cli_x', clientSecret: 'secret_x' };
    const absent = await svc(['import', 'sites', path.join(dir, 'absent.csv')], svcEnv(t, tenant));
    expect(absent.code).toBe(2);
    expect(absent.stderr).toContain('ENOENT');
  });
});
