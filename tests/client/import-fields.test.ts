/**
 * `svc import` refuses a file naming something that is not a field of the resource (a CSV header's column, a
 * JSON Lines key) before sending any row: each row would otherwise be a 422, one request each at the
 * import's pace. Exit 2, no request, no progress log.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { svcEnv } from '../helpers/client.js';
import { siteBody } from '../helpers/tenants.js';
import { runSvcInProcess } from './svc-in-process.js';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-import-fields-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Credentials are never used: the file is refused before the token request. */
const tenant = { clientId: 'cli_x', clientSecret: 'secret_x' };

async function importRefused(resource: string, name: string, content: string) {
  const input = path.join(dir, name);
  writeFileSync(input, content);
  const requests: string[] = [];
  const run = await runSvcInProcess(t, ['import', resource, input], svcEnv(t, tenant), requests);
  expect(run.code).toBe(2);
  expect(requests).toEqual([]);
  expect(existsSync(`${input}.progress.jsonl`)).toBe(false);
  return { input, stderr: run.stderr };
}

it('refuses a CSV header naming a column the resource does not have', async () => {
  const { input, stderr } = await importRefused(
    'sites',
    'misnamed.csv',
    'name,site_code,city\nStore 9,S-9,Springfield\nStore 10,S-10,Springfield\n',
  );
  expect(stderr).toContain(
    `svc import sites: the header of ${input} names "site_code" (did you mean siteCode?), not a field of sites; nothing was sent. Its fields: name, siteCode, `,
  );
});

it('refuses JSON Lines with a key the resource does not have, naming the key, its first line and the field meant', async () => {
  // Every line misspelt the same way (an export's naming), one line with a stray key of its own.
  const lines = [1, 2, 3].map((index) => {
    const { siteCode, ...rest } = siteBody();
    return JSON.stringify({ ...rest, site_code: siteCode, ...(index === 3 ? { colour: 'red' } : {}) });
  });
  const { input, stderr } = await importRefused('sites', 'misnamed.jsonl', `${lines.join('\n')}\n`);
  expect(stderr).toContain(
    `svc import sites: ${input} names "site_code" (did you mean siteCode?) on line 1 (and 2 more lines), ` +
      `"colour" on line 3, not fields of sites; nothing was sent. Its fields: name, siteCode, `,
  );

  // A message file may name the visit by clientTicketNumber: not an unknown key.
  const message = await importRefused(
    'messages',
    'messages.ndjson',
    `${JSON.stringify({ clientTicketNumber: 'T-1', type: 'Note', messageThred: 'hello' })}\n`,
  );
  expect(message.stderr).toContain(
    `names "messageThred" (did you mean messageThread?) on line 1, not a field of messages`,
  );
});
