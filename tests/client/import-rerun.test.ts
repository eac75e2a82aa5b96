/**
 * `svc import` run again on the same file corrected in place (the integrator's fix-and-rerun): rows created
 * before are not sent again, corrected rows are sent under new keys, rows refused for good and unchanged are
 * reported from the progress log, rows whose refusal may pass later are sent again, a row changed after its
 * resource was created is not sent but compared with that resource read back (the fields to PATCH, or up to
 * date once PATCHed, then not read again), and rows added, inserted, removed or
 * moved create nothing twice. Also a version 1 progress log (svc before this): converted and resumed, or
 * refused for a changed file. `main` runs in this process against the test app (svc-in-process.ts); the
 * kill-and-resume of a corrected file is import.kill.test.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FetchLike } from '@site-services/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runImport } from '../../packages/client/src/cli/import/run.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, svcEnv } from '../helpers/client.js';
import { createTenant, siteBody, type TestTenant } from '../helpers/tenants.js';
import { visitBody, visitTenant } from '../helpers/visits.js';
import { runSvcInProcess, type SentPost } from './svc-in-process.js';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-import-rerun-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
/** A file of JSON Lines (one row per body) in the test's directory; `write` rewrites it in place. */
function importFile(rows: unknown[]) {
  const file = path.join(dir, `${++files}.jsonl`);
  const write = (next: unknown[]) => writeFileSync(file, `${next.map((row) => JSON.stringify(row)).join('\n')}\n`);
  write(rows);
  return { file, write };
}

/** `svc import` in this process; answers its exit, output, report, requests and the POSTs it sent. */
async function svcImport(tenant: TestTenant, resource: string, file: string, ...options: string[]) {
  const posts: SentPost[] = [];
  const requests: string[] = [];
  const env = svcEnv(t, tenant, { SVC_ALLOW_RATE_ABOVE_LIMIT: '1' });
  const run = await runSvcInProcess(t, ['import', resource, file, '--rate', '60000', ...options], env, requests, posts);
  const report = JSON.parse(readFileSync(`${file}.report.json`, 'utf8'));
  const reads = requests.filter((request) => request.startsWith(`GET /api/v1/${resource}/`));
  return { ...run, report, posts, sent: posts.map((post) => post.body), reads };
}

async function siteCodes(tenant: TestTenant): Promise<string[]> {
  const codes: string[] = [];
  for await (const site of clientFor(t, tenant).sites.list({ 'page[size]': 100 })) codes.push(site.attributes.siteCode);
  return codes.sort();
}

describe('fix and run again', () => {
  it('sends only the corrected and the new rows, each corrected one under a new key, and reports the unchanged refusal from the log', async () => {
    const tenant = await createTenant(t);
    const taken = siteBody();
    await clientFor(t, tenant).sites.create(taken);
    const [first, second, third, inserted, appended] = [siteBody(), siteBody(), siteBody(), siteBody(), siteBody()];
    const invalid = siteBody({ postalCode: 62701 });
    const duplicate = siteBody({ siteCode: taken.siteCode });
    const input = importFile([first, invalid, second, duplicate, third]);

    const run1 = await svcImport(tenant, 'sites', input.file);
    expect(run1.code, run1.stdout + run1.stderr).toBe(1);
    expect(run1.stdout).toContain('5 rows; created 3 now (0 answered from an earlier attempt), 0 before; rejected 2');
    const invalidKey = run1.posts[1]!.key;

    // The integrator fixes the postal code in place, inserts a row at the top, moves a row, appends one.
    const fixed = { ...invalid, postalCode: '62701' };
    input.write([inserted, first, fixed, third, duplicate, second, appended]);
    const run2 = await svcImport(tenant, 'sites', input.file);
    expect(run2.code, run2.stdout + run2.stderr).toBe(1);
    expect(run2.sent).toEqual([inserted, fixed, appended]);
    expect(run2.posts[1]!.key).not.toBe(invalidKey);
    expect(run2.stdout).toContain('7 rows; created 3 now (0 answered from an earlier attempt), 3 before; rejected 1;');
    expect(run2.stdout).toMatch(/row 5 \(line 5\): 409 duplicate-resource: .* \[unchanged since: not sent again\]/);
    expect(run2.report.rejected).toMatchObject([{ row: 5, status: 409, notSentAgain: true }]);

    // Then the duplicate's siteCode, and a row removed: the one corrected row is sent, nothing else.
    const renamed = { ...duplicate, siteCode: `${duplicate.siteCode}-B` };
    input.write([inserted, first, fixed, third, renamed, appended]);
    const run3 = await svcImport(tenant, 'sites', input.file);
    expect(run3.code, run3.stdout).toBe(0);
    expect(run3.sent).toEqual([renamed]);
    expect(run3.report).toMatchObject({ status: 'completed', rows: 6, alreadyCreated: 5, created: 1, rejected: [] });

    const expected = [taken, first, second, third, inserted, appended, fixed, renamed].map((site) => site.siteCode);
    expect(await siteCodes(tenant)).toEqual(expected.sort());
    // The unchanged file again: nothing to send.
    const run4 = await svcImport(tenant, 'sites', input.file);
    expect([run4.code, run4.sent]).toEqual([0, []]);
  });

  it('sends an unchanged row again when its refusal may pass later (404, 409 invalid-project), not a 422 unless --retry-rejected', async () => {
    const v = await visitTenant(t);
    const unknownSite = visitBody(v, { clientSiteId: 'NO-SUCH-SITE' });
    const unknownProject = visitBody(v, { projectId: 999_999 });
    const invalid = visitBody(v, { startDate: 'soon' });
    const input = importFile([unknownSite, unknownProject, invalid]);
    const run1 = await svcImport(v, 'site-visits', input.file);
    expect(run1.report.rejected.map((row: { status: number }) => row.status)).toEqual([404, 409, 422]);

    const run2 = await svcImport(v, 'site-visits', input.file);
    expect(run2.sent).toEqual([unknownSite, unknownProject]);
    expect(run2.stdout).toMatch(/row 3 \(line 3\): 422 validation-error: .*\[unchanged since: not sent again\]/);
    expect(run2.posts.map((post) => post.key)).toEqual(run1.posts.slice(0, 2).map((post) => post.key));
    const forced = await svcImport(v, 'site-visits', input.file, '--retry-rejected');
    expect(forced.sent).toEqual([unknownSite, unknownProject, invalid]);

    const fixedRows = [
      { ...unknownSite, clientSiteId: v.siteCode },
      { ...unknownProject, projectId: v.projectId },
      { ...invalid, startDate: '2026-12-01T09:00:00Z' },
    ];
    input.write(fixedRows);
    const run3 = await svcImport(v, 'site-visits', input.file);
    expect(run3.code, run3.stdout).toBe(0);
    expect(run3.sent).toEqual(fixedRows);
    for (const [index, post] of run3.posts.entries()) expect(post.key).not.toBe(run1.posts[index]!.key);
    const tickets = [];
    for await (const visit of clientFor(t, v).siteVisits.list()) tickets.push(visit.attributes.clientTicketNumber);
    expect(tickets.sort()).toEqual(fixedRows.map((row) => row.clientTicketNumber).sort());
  });
});

describe('a row changed after its resource was created', () => {
  it('is not sent: reported with the resource and the fields to PATCH; once PATCHed, up to date (read once, then never again)', async () => {
    const tenant = await createTenant(t);
    const [a, b, c] = [siteBody(), siteBody(), siteBody()];
    const input = importFile([a, b, c]);
    expect((await svcImport(tenant, 'sites', input.file)).code).toBe(0);
    const client = clientFor(t, tenant);
    const [siteA, siteC] = [
      (await client.sites.findBySiteCode(a.siteCode))!,
      (await client.sites.findBySiteCode(c.siteCode))!,
    ];

    // Corrected in place, a moved below b: found by siteCode, each read back and compared, nothing sent.
    const [fixedA, fixedC] = [
      { ...a, name: 'Corrected name' },
      { ...c, name: 'Renamed', city: 'Shelbyville' },
    ];
    input.write([b, fixedA, fixedC]);
    const run = await svcImport(tenant, 'sites', input.file);
    expect(run.code).toBe(1);
    expect(run.sent).toEqual([]);
    expect(run.reads).toEqual([`GET /api/v1/sites/${siteA.id}`, `GET /api/v1/sites/${siteC.id}`]);
    expect(run.stdout).toContain(
      '3 rows; created 0 now (0 answered from an earlier attempt), 1 before; rejected 0; changed since created 2; completed',
    );
    expect(run.stdout).toContain(
      `row 2 (line 2): changed since it was created as ${siteA.id} (same siteCode): not sent, which would create a second site; ${siteA.id} differs from the row in name: change it with PATCH /api/v1/sites/${siteA.id}\n`,
    );
    expect(run.stdout).toContain(`${siteC.id} differs from the row in name, city: change them with PATCH`);
    expect(run.stdout).not.toContain('every run');
    expect(run.report.changed).toEqual([
      { row: 2, line: 2, id: siteA.id, matchedBy: 'siteCode', differs: ['name'], detail: expect.any(String) },
      { row: 3, line: 3, id: siteC.id, matchedBy: 'siteCode', differs: ['name', 'city'], detail: expect.any(String) },
    ]);
    expect(run.report.upToDate).toEqual([]);

    // The integrator makes the PATCH for a, and half of c's.
    await client.sites.update(siteA.id, { name: 'Corrected name' });
    await client.sites.update(siteC.id, { name: 'Renamed' });
    const after = await svcImport(tenant, 'sites', input.file);
    expect(after.code).toBe(1);
    expect(after.sent).toEqual([]);
    expect(after.reads).toEqual([`GET /api/v1/sites/${siteA.id}`, `GET /api/v1/sites/${siteC.id}`]);
    expect(after.stdout).toContain('rejected 0; changed since created 1; up to date after a change 1; completed');
    expect(after.stdout).toContain(`row 2 (line 2): up to date: ${siteA.id} holds what the row says`);
    expect(after.report.upToDate).toEqual([{ row: 2, line: 2, id: siteA.id, checkedThisRun: true }]);
    expect(after.report.changed).toMatchObject([{ row: 3, id: siteC.id, differs: ['city'] }]);
    expect(after.report.changed[0].detail).toContain(`differs from the row in city: change it with PATCH`);
    const logged = readFileSync(`${input.file}.progress.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(logged.at(-1)).toEqual({
      row: 2,
      line: 2,
      hash: expect.any(String),
      n: 1,
      outcome: 'up-to-date',
      id: siteA.id,
      checkedAt: expect.any(String),
      siteCode: a.siteCode,
    });

    // The progress log remembers a: only c is read again.
    const third = await svcImport(tenant, 'sites', input.file);
    expect(third.reads).toEqual([`GET /api/v1/sites/${siteC.id}`]);
    expect(third.report.upToDate).toEqual([{ row: 2, line: 2, id: siteA.id, checkedThisRun: false }]);
    expect(third.stdout).toContain('up to date after a change 1;');
    expect(third.stdout).not.toContain('row 2 (line 2)');

    // c's city too: everything is as the file says; the import is done (exit 0), nothing sent, no site more.
    await client.sites.update(siteC.id, { city: 'Shelbyville' });
    const done = await svcImport(tenant, 'sites', input.file);
    expect([done.code, done.sent, done.reads], done.stdout).toEqual([0, [], [`GET /api/v1/sites/${siteC.id}`]]);
    expect(done.report.upToDate.map((row: { row: number }) => row.row)).toEqual([2, 3]);
    expect(await siteCodes(tenant)).toEqual([a.siteCode, b.siteCode, c.siteCode].sort());
    const last = await svcImport(tenant, 'sites', input.file);
    expect([last.code, last.sent, last.reads]).toEqual([0, [], []]);
  });

  it('compares a visit and a message as the import sends them (typed CSV cells, dates, asset ids, a short urgency)', async () => {
    const v = await visitTenant(t, { assets: 2 });
    const body = visitBody(v, { siteAssetIds: [...v.assetIds].reverse(), trackingNumber: 'TRK-1' });
    const header = Object.keys(body).join(',');
    const csv = (row: typeof body) =>
      `${header}\n${Object.values(row)
        .map((value) => (Array.isArray(value) ? value.join(';') : String(value)))
        .join(',')}\n`;
    const visits = path.join(dir, `${++files}-visits.csv`);
    writeFileSync(visits, csv(body));
    expect((await svcImport(v, 'site-visits', visits)).code).toBe(0);
    const client = clientFor(t, v);
    const visit = (await client.siteVisits.findByClientTicketNumber(body.clientTicketNumber))!;

    writeFileSync(visits, csv({ ...body, description: 'Replace the card reader and the PIN pad' }));
    const changed = await svcImport(v, 'site-visits', visits);
    expect(changed.report.changed).toMatchObject([{ id: visit.id, differs: ['description'] }]);
    await client.siteVisits.update(visit.id, { description: 'Replace the card reader and the PIN pad' });
    const upToDate = await svcImport(v, 'site-visits', visits);
    expect([upToDate.code, upToDate.report.upToDate], upToDate.stdout).toEqual([
      0,
      [{ row: 1, line: 2, id: visit.id, checkedThisRun: true }],
    ]);

    // A message by its visit's ticket number, with the short urgency the service stores in full.
    const note = (text: string) => ({
      clientTicketNumber: body.clientTicketNumber,
      messageThread: text,
      urgency: 'High',
    });
    const input = importFile([note('one')]);
    expect((await svcImport(v, 'messages', input.file)).code).toBe(0);
    input.write([note('one, corrected')]);
    const message = await svcImport(v, 'messages', input.file);
    expect(message.report.changed).toMatchObject([{ matchedBy: 'position', differs: ['messageThread'] }]);
    const id = message.report.changed[0].id as string;
    await client.messages.update(id, { messageThread: 'one, corrected' });
    const messageUpToDate = await svcImport(v, 'messages', input.file);
    expect([messageUpToDate.code, messageUpToDate.sent, messageUpToDate.report.upToDate]).toEqual([
      0,
      [],
      [{ row: 1, line: 1, id, checkedThisRun: true }],
    ]);
  });

  it('a read the service refuses is reported, not a crash: 404 not found, 403 once (no more reads), 503 past the retries interrupts', async () => {
    const tenant = await createTenant(t);
    const rows = [siteBody(), siteBody(), siteBody()];
    const input = importFile(rows);
    expect((await svcImport(tenant, 'sites', input.file)).code).toBe(0);
    input.write(rows.map((row) => ({ ...row, name: `${row.name} (corrected)` })));
    const options = { resource: 'sites' as const, file: input.file, ratePerMinute: 60_000 };
    const answering = (answer: (index: number) => Response | undefined, scope?: string) => {
      const reads: string[] = [];
      const fetch: FetchLike = async (request) => {
        if (request.method !== 'GET' || !/\/api\/v1\/sites\/site_/.test(request.url)) return globalThis.fetch(request);
        reads.push(request.url);
        return answer(reads.length - 1) ?? globalThis.fetch(request);
      };
      const deps = {
        client: clientFor(t, tenant, { fetch, retry: { maxAttempts: 2 }, ...(scope ? { scope } : {}) }),
        runtime: { now: () => Date.now(), sleep: async () => undefined, random: () => 0.5 },
        progressOut: { write: () => true } as never,
        tty: false,
      };
      return { deps, reads };
    };
    const problem = (status: number, title: string) =>
      new Response(JSON.stringify({ type: 'about:blank', title, status, detail: title }), {
        status,
        headers: { 'content-type': 'application/problem+json' },
      });

    const gone = answering((index) => (index === 0 ? problem(404, 'Not found') : undefined));
    const first = await runImport(options, gone.deps);
    expect(first).toMatchObject({ status: 'completed', upToDate: [] });
    expect(first.changed.map((row) => row.differs ?? row.notCompared)).toEqual([
      expect.stringMatching(/^site_\w+ is not found any more \(404 Not found\)$/),
      ['name'],
      ['name'],
    ]);
    expect(first.changed[0]!.detail).toMatch(
      /is not found any more \(404 Not found\): if this row is another site, import it from a file of its own$/,
    );

    // A token that may create sites but not read them: the service's own 403.
    const forbidden = answering(() => undefined, 'sites:write');
    const refused = await runImport(options, forbidden.deps);
    expect(forbidden.reads).toHaveLength(1);
    expect(refused.status).toBe('completed');
    expect(refused.changed.map((row) => row.notCompared)).toEqual(
      Array(3).fill(expect.stringMatching(/^these credentials may not read it \(403 /)),
    );
    expect(refused.changed[1]!.detail).toMatch(
      /change site_\w+ with PATCH \/api\/v1\/sites\/site_\w+ \(not compared with the row: these credentials may not read it \(403 [^)]*\)\)$/,
    );

    const unavailable = answering(() => new Response('{}', { status: 503, headers: { 'retry-after': '0' } }));
    const interrupted = await runImport(options, unavailable.deps);
    expect(unavailable.reads).toHaveLength(2);
    expect(interrupted).toMatchObject({
      status: 'interrupted',
      changed: [],
      error: expect.stringMatching(/^row 1: GET .* 503/),
    });
  });

  it('a message (no natural key) is found by its place in the file; a row appended beside it is sent', async () => {
    const v = await visitTenant(t);
    const visit = await clientFor(t, v).siteVisits.create(visitBody(v) as never);
    const note = (text: string) => ({ siteVisitId: visit.id, messageThread: text });
    const input = importFile([note('one'), note('two'), note('three')]);
    expect((await svcImport(v, 'messages', input.file)).code).toBe(0);

    input.write([note('one'), note('two, corrected'), note('three'), note('four')]);
    const run = await svcImport(v, 'messages', input.file);
    expect(run.code).toBe(1);
    expect(run.sent).toEqual([note('four')]);
    expect(run.report.changed).toMatchObject([{ row: 2, matchedBy: 'position', id: expect.stringMatching(/^msg_/) }]);
    expect(run.report.changed[0].detail).toContain('in the place of the row that created it');
    expect(run.report.changed[0].detail).toContain(
      'or if this row is another message, import it from a file of its own',
    );

    const threads = [];
    for await (const message of clientFor(t, v).messages.list()) threads.push(message.attributes.messageThread);
    expect(threads).toEqual(['one', 'two', 'three', 'four']);
  });

  it('a row whose answer was lost, then corrected, is sent under its first key: the conflict says it was created', async () => {
    const v = await visitTenant(t);
    const visit = await clientFor(t, v).siteVisits.create(visitBody(v) as never);
    const note = (text: string) => ({ siteVisitId: visit.id, messageThread: text });
    const input = importFile([note('one'), note('two')]);
    // The service creates the second message, but its answers are lost (503 in their place) until the retries end.
    const losing: FetchLike = async (request) => {
      if (request.method !== 'POST' || !request.url.endsWith('/messages')) return fetch(request);
      const body = (await request.clone().json()) as { messageThread: string };
      const response = await fetch(request);
      return body.messageThread === 'two'
        ? new Response('{}', { status: 503, headers: { 'retry-after': '0' } })
        : response;
    };
    const deps = (fetch?: FetchLike) => ({
      client: clientFor(t, v, { ...(fetch ? { fetch } : {}), retry: { maxAttempts: 2 } }),
      runtime: { now: () => Date.now(), sleep: async () => undefined, random: () => 0.5 },
      progressOut: { write: () => true } as never,
      tty: false,
    });
    const options = { resource: 'messages' as const, file: input.file, ratePerMinute: 60_000 };
    expect(await runImport(options, deps(losing))).toMatchObject({ status: 'interrupted', created: 1 });

    input.write([note('one'), note('two, corrected')]);
    const rerun = await runImport(options, deps());
    expect(rerun).toMatchObject({ status: 'completed', created: 0, rejected: [] });
    expect(rerun.changed).toMatchObject([{ row: 2, id: null, matchedBy: 'key' }]);
    expect(rerun.changed[0]!.detail).toContain('its id is unknown: find it with svc get messages');
    const threads = [];
    for await (const message of clientFor(t, v).messages.list()) threads.push(message.attributes.messageThread);
    expect(threads).toEqual(['one', 'two']);
  });
});

describe('progress logs', () => {
  it('converts a version 1 log of the same file and resumes it under its keys (the row in flight replayed); refuses it for a changed file', async () => {
    const tenant = await createTenant(t);
    const rows = [siteBody(), siteBody(), siteBody()];
    const input = importFile(rows);
    const sha256 = createHash('sha256').update(readFileSync(input.file)).digest('hex');
    const v1Key = (row: number) => `svc-import:sites:${sha256.slice(0, 32)}:${row}`;
    const client = clientFor(t, tenant);
    // Row 1 created and logged; row 2 created, its answer lost when svc was killed; row 3 never sent.
    const one = await client.sites.create(rows[0]!, { idempotencyKey: v1Key(1) });
    await client.sites.create(rows[1]!, { idempotencyKey: v1Key(2) });
    const log = `${input.file}.progress.jsonl`;
    const header = {
      kind: 'svc-import-progress',
      version: 1,
      resource: 'sites',
      file: 'x.jsonl',
      sha256,
      rows: 3,
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    const created = { row: 1, key: v1Key(1), outcome: 'created', id: one.id, replayed: false };
    const v1Text = `${JSON.stringify(header)}\n${JSON.stringify(created)}\n`;
    writeFileSync(log, v1Text);

    const run = await svcImport(tenant, 'sites', input.file);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('created 2 now (1 answered from an earlier attempt), 1 before');
    expect(run.posts.map((post) => post.key)).toEqual([v1Key(2), v1Key(3)]);
    expect(readFileSync(`${log}.v1`, 'utf8')).toBe(v1Text);
    expect(JSON.parse(readFileSync(log, 'utf8').split('\n')[0]!)).toMatchObject({
      version: 2,
      convertedFrom: `${log}.v1`,
    });
    expect(await siteCodes(tenant)).toEqual(rows.map((row) => row.siteCode).sort());

    // A version 1 log of a file that changed since cannot be matched row for row: refused, saying what to do.
    const other = importFile([siteBody()]);
    writeFileSync(`${other.file}.progress.jsonl`, v1Text);
    const refused = await runSvcInProcess(t, ['import', 'sites', other.file], svcEnv(t, tenant));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('was written by an earlier svc (progress log version 1)');
    expect(refused.stderr).toContain('Put the file back as it was and run the same command');
  });

  it("refuses a log of another resource, a newer version's, or a file that is no log (exit 2, nothing sent)", async () => {
    const tenant = await createTenant(t);
    const input = importFile([siteBody()]);
    const log = `${input.file}.progress.jsonl`;
    const attempts: Array<[string, string]> = [
      [
        JSON.stringify({ kind: 'svc-import-progress', version: 2, resource: 'messages', importId: 'x' }),
        'is the progress log of an import of messages, not sites',
      ],
      [
        JSON.stringify({ kind: 'svc-import-progress', version: 3, resource: 'sites' }),
        'written by a newer svc than this one',
      ],
      ['name,siteCode', 'is not an svc import progress log'],
    ];
    for (const [text, message] of attempts) {
      writeFileSync(log, `${text}\n`);
      const requests: string[] = [];
      const run = await runSvcInProcess(t, ['import', 'sites', input.file], svcEnv(t, tenant), requests);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
      expect(requests).toEqual([]);
    }
    expect(existsSync(`${input.file}.report.json`)).toBe(false);
  });
});
