/**
 * A sandbox's demo tenant and its credential packet are an API process's to make: a ROLE=worker start on an empty
 * database printed a packet whose baseUrl named its own PORT, where nothing answers (a worker has no API port), and
 * kept it in its DATA_DIR, so svc and the README's commands talked to nobody. Now the worker provisions nothing and
 * says who will; the first API process on the database provisions and prints the packet with its own address.
 * The compiled service, as `npm start` runs it, on the test's database (PostgreSQL) or an embedded one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { BUILD_LIMIT_MS, ensureBuilt, SERVER_ENTRY } from '../helpers/compiled-server.js';
import { killAll, type RealProcess, startNode } from '../helpers/real-processes.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-sandbox-'));
/** On PostgreSQL a database of the file's own; else none: the service makes its embedded one in DATA_DIR. */
let empty: Awaited<ReturnType<typeof openEmptyDatabase>> | undefined;

beforeAll(async () => {
  ensureBuilt();
  if (inject('databaseUrl')) empty = await openEmptyDatabase('ss_worker_sandbox');
}, BUILD_LIMIT_MS);
afterAll(async () => {
  killAll();
  await empty?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The service with ROLE, in the sandbox (the default environment), on the file's database and DATA_DIR. */
function start(role: 'worker' | 'api', port: number): RealProcess {
  const database: Record<string, string> = empty?.url ? { DATABASE_URL: empty.url } : {};
  return startNode([SERVER_ENTRY], {
    ...database,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    ROLE: role,
  });
}

async function stop(server: RealProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

it('a worker on an empty sandbox database provisions nothing; the first API process does, with its address', {
  timeout: 240_000,
}, async () => {
  const workerPort = await freePort();
  const worker = start('worker', workerPort);
  await worker.waitFor(/delivery worker running/);
  await stop(worker);
  const said = worker.output();
  expect(said).toContain(
    'site-services: no tenant yet: a worker serves no API, so the sandbox demo tenant, its credential packet and ' +
      'the operator token come with the first start of a ROLE=api or ROLE=all process on this database',
  );
  expect(said).not.toContain('credential packet (also in');
  expect(said).not.toContain(`:${workerPort}`);
  expect(said).not.toContain('Operator API token');
  expect(fs.existsSync(path.join(dataDir, 'credentials.json'))).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'admin-token'))).toBe(false);

  const apiPort = await freePort();
  const api = start('api', apiPort);
  await api.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
  const packet = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'));
  expect(packet.baseUrl).toBe(`http://127.0.0.1:${apiPort}`);
  expect(api.stdout()).toContain('Sandbox demo tenant created. Its credential packet');
  expect(api.stdout()).toContain('Operator API token');
  // The packet's address answers, and its credentials obtain a token there.
  const granted = await fetch(`${packet.baseUrl}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: packet.client_id,
      client_secret: packet.client_secret,
    }),
  });
  expect(granted.status).toBe(200);
  await stop(api);
});
