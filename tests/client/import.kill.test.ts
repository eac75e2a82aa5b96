/**
 * `svc import` killed midway (SIGKILL, no chance to clean up) and run again creates every row exactly
 * once: the progress log skips the rows it recorded, and the row in flight at the kill is sent again under
 * its Idempotency-Key, which the service answers from the first attempt. So does the run of a file corrected
 * in place (rejected rows fixed, rows inserted and appended), on messages, which no natural key guards. The
 * CLI runs as a child process (the real bin, through tsx) against the in-process test app, at a test pace
 * (the app's rate limit is raised, and SVC_ALLOW_RATE_ABOVE_LIMIT lifts the CLI's cap).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, runSvc, svcEnv } from '../helpers/client.js';
import { createTenant } from '../helpers/tenants.js';
import { visitBody, visitTenant } from '../helpers/visits.js';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-import-kill-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Lines of the progress log recording a created row (0 while there is no log). */
function createdRows(log: string): number {
  if (!existsSync(log)) return 0;
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"outcome":"created"')).length;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('an import of 1,000 sites killed midway and run again creates exactly 1,000 sites', {
  timeout: 180_000,
}, async () => {
  const tenant = await createTenant(t);
  const file = path.join(dir, 'sites.csv');
  const header = 'name,siteCode,addressLine1,city,stateRegion,postalCode,country,keyRequired';
  const lines = Array.from(
    { length: 1000 },
    (_, index) =>
      `"Store ${index + 1}, Main St",K-${index + 1},${index + 1} Main Street,Springfield,IL,62701,US,${index % 2 ? 'true' : 'false'}`,
  );
  writeFileSync(file, `${header}\n${lines.join('\n')}\n`);
  const log = `${file}.progress.jsonl`;
  const env = svcEnv(t, tenant, { SVC_ALLOW_RATE_ABOVE_LIMIT: '1' });
  const args = ['import', 'sites', file, '--rate', '60000'];

  const first = runSvc(args, env);
  await waitUntil(() => createdRows(log) >= 250, 120_000);
  first.child.kill('SIGKILL');
  const killed = await first.done;
  expect(killed.signal).toBe('SIGKILL');
  const before = createdRows(log);
  expect(before).toBeGreaterThanOrEqual(250);
  expect(before).toBeLessThan(1000);

  const second = await runSvc(args, env).done;
  expect(second.code, second.stdout + second.stderr).toBe(0);
  expect(second.stdout).toContain(`${before} before`);
  expect(createdRows(log)).toBe(1000);

  const report = JSON.parse(readFileSync(`${file}.report.json`, 'utf8'));
  expect(report).toMatchObject({
    status: 'completed',
    rows: 1000,
    alreadyCreated: before,
    created: 1000 - before,
    rejected: [],
  });

  const client = clientFor(t, tenant);
  const codes: string[] = [];
  for await (const site of client.sites.list({ 'page[size]': 100 })) codes.push(site.attributes.siteCode);
  expect(codes).toHaveLength(1000);
  expect(new Set(codes).size).toBe(1000);
  const last = await client.sites.findBySiteCode('K-1000');
  expect(last?.attributes).toMatchObject({ name: 'Store 1000, Main St', keyRequired: true });
});

it('a corrected file (rows fixed, inserted, appended) killed midway and run again creates each message once', {
  timeout: 180_000,
}, async () => {
  const v = await visitTenant(t);
  const visit = await clientFor(t, v).siteVisits.create(visitBody(v) as never);
  const file = path.join(dir, 'messages.jsonl');
  const note = (text: string, urgency = 'Low') => ({ siteVisitId: visit.id, messageThread: text, urgency });
  const write = (rows: unknown[]) => writeFileSync(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
  // 400 rows, every tenth refused (an urgency the service does not know).
  const rows = Array.from({ length: 400 }, (_, index) =>
    note(`note ${index + 1}`, index % 10 === 9 ? 'Whenever' : 'Low'),
  );
  write(rows);
  const log = `${file}.progress.jsonl`;
  const env = svcEnv(t, v, { SVC_ALLOW_RATE_ABOVE_LIMIT: '1' });
  const args = ['import', 'messages', file, '--rate', '60000'];
  const first = await runSvc(args, env).done;
  expect(first.code, first.stdout + first.stderr).toBe(1);
  expect(first.stdout).toContain('400 rows; created 360 now');

  // The 40 fixed in place, 10 rows inserted after row 200, 150 appended: 200 to send.
  const fixed = rows.map((row) => (row.urgency === 'Whenever' ? { ...row, urgency: 'High' } : row));
  const inserted = Array.from({ length: 10 }, (_, index) => note(`inserted ${index + 1}`));
  const appended = Array.from({ length: 150 }, (_, index) => note(`appended ${index + 1}`));
  write([...fixed.slice(0, 200), ...inserted, ...fixed.slice(200), ...appended]);
  const second = runSvc(args, env);
  await waitUntil(() => createdRows(log) >= 360 + 60, 120_000);
  second.child.kill('SIGKILL');
  expect((await second.done).signal).toBe('SIGKILL');
  const before = createdRows(log);
  expect(before).toBeLessThan(560);

  const third = await runSvc(args, env).done;
  expect(third.code, third.stdout + third.stderr).toBe(0);
  expect(third.stdout).toContain(`560 rows; created ${560 - before} now`);
  expect(third.stdout).toContain(`${before} before; rejected 0; completed`);
  const threads: string[] = [];
  for await (const message of clientFor(t, v).messages.list({ 'page[size]': 100 }))
    threads.push(message.attributes.messageThread);
  expect(threads).toHaveLength(560);
  expect(new Set(threads).size).toBe(560);
});
