/**
 * Scale-out on one PostgreSQL (PostgreSQL only: PGlite belongs to one process): the real server, compiled
 * as `npm start` runs it, started as a cluster of 2 API processes (WEB_CONCURRENCY=2, ROLE=api) plus 2
 * delivery workers (ROLE=worker), each a process of its own. Concurrent creates spread over both API
 * processes behave as with one process (one resource per Idempotency-Key, one site per siteCode), every
 * event is delivered exactly once by the two workers together, and SIGTERM stops the cluster's children
 * gracefully.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { BUILD_LIMIT_MS, ensureBuilt, ROOT, SERVER_ENTRY } from '../helpers/compiled-server.js';
import { siteBody } from '../helpers/tenants.js';
import { type Endpoint, TestReceiver } from '../helpers/webhooks.js';

const ADMIN_TOKEN = `adm_${randomUUID()}`;

interface Server {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Server {
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '1000000',
      ADMIN_TOKEN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One request on a connection of its own, so that the cluster hands requests to both API processes. */
function send(
  method: string,
  url: string,
  options: { token?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const body = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json));
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': body.length });
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: text ? JSON.parse(text) : undefined }),
      );
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The pids that logged a line containing `message` (pino writes the pid on every line). */
function pidsLogging(output: string, message: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.includes(message)) continue;
    try {
      pids.add((JSON.parse(line) as { pid: number }).pid);
    } catch {
      // not a log line
    }
  }
  return pids;
}

const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)(
  'two API processes and two delivery workers on one PostgreSQL',
  { timeout: 120_000 },
  () => {
    let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
    let receiver: TestReceiver;
    let endpoint: Endpoint;
    let api: Server;
    let workers: Server[];
    let baseUrl: string;
    let metricsUrl: string;
    // Made by the first hook, not when the file is collected: skipped (no TEST_DATABASE_URL), no hook runs,
    // and a directory made at collection was left in the temporary directory by every run on PGlite.
    let directory: string;

    beforeAll(ensureBuilt, BUILD_LIMIT_MS);
    beforeAll(async () => {
      directory = fs.mkdtempSync(path.join(os.tmpdir(), 'scale-out-'));
      empty = await openEmptyDatabase();
      receiver = await TestReceiver.start();
      // The receiver answers 200 always, a little later so that both workers have deliveries in flight.
      endpoint = receiver.endpoint(async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return 200;
      });
      const caFile = path.join(directory, 'ca.pem');
      fs.writeFileSync(caFile, receiver.caPem);
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      const common = {
        DATABASE_URL: empty.url!,
        DATA_DIR: directory,
        WEBHOOK_TEST_ALLOWED_DESTINATIONS: `localhost:${receiver.port}`,
      };
      metricsUrl = `http://127.0.0.1:${await freePort()}/metrics`;
      api = start({
        ...common,
        PORT: String(port),
        ROLE: 'api',
        WEB_CONCURRENCY: '2',
        LOG_LEVEL: 'info',
        METRICS_PORT: new URL(metricsUrl).port,
      });
      const worker = () =>
        start({ ...common, ROLE: 'worker', LOG_LEVEL: 'debug', WEBHOOK_CONCURRENCY: '2', NODE_EXTRA_CA_CERTS: caFile });
      workers = [worker(), worker()];
      await until(
        async () => (await fetch(`${baseUrl}/ready`).catch(() => undefined))?.ok === true,
        `the API processes did not start:\n${api.output()}`,
      );
      // Ready answers once the first child listens; on a loaded machine the second may still be starting.
      await until(
        () => pidsLogging(api.output(), '"service started"').size === 2,
        `the second API process did not start:\n${api.output()}`,
      );
      // Each worker is ready once its LISTEN connection is open (to this database: the server is shared, and
      // another database's service, a developer's or another run's, has listeners of the same name).
      await until(
        async () => {
          const { rows } = await sql<{
            n: number;
          }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'site-services listener webhook_deliveries %'`.execute(
            empty.database.db,
          );
          return rows[0]!.n === 2;
        },
        `the workers did not start:\n${workers.map((each) => each.output()).join('\n')}`,
      );
    }, 300_000);

    afterAll(async () => {
      for (const server of [api, ...(workers ?? [])])
        if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
      await receiver?.close();
      await empty?.drop();
      if (directory) fs.rmSync(directory, { recursive: true, force: true });
    });

    async function tenant() {
      const created = await send('POST', `${baseUrl}/admin/v1/tenants`, {
        token: ADMIN_TOKEN,
        json: { name: `Scale ${randomUUID().slice(0, 8)}` },
      });
      expect(created.status).toBe(201);
      const { tenantId, credentials } = created.body.data;
      const issued = await send('POST', `${baseUrl}/api/v1/oauth/token`, {
        json: {
          grant_type: 'client_credentials',
          client_id: credentials.client_id,
          client_secret: credentials.client_secret,
        },
      });
      expect(issued.status).toBe(200);
      return { tenantId: tenantId as string, token: issued.body.access_token as string };
    }

    it('says once where the service answers: the primary, not each child (nor each child per address)', () => {
      const said = api
        .output()
        .split('\n')
        .filter((line) => /listening (on|at) /i.test(line));
      expect(said, api.output()).toEqual([
        expect.stringMatching(new RegExp(`^site-services: listening on ${baseUrl.replace(/\./g, '\\.')} \\(ready `)),
      ]);
    });

    it('serves from two API processes; concurrent creates with one Idempotency-Key make exactly one site', async () => {
      const { token } = await tenant();
      const body = siteBody();
      const key = `import-row-${randomUUID()}`;
      const answers = await Promise.all(
        Array.from({ length: 16 }, () =>
          send('POST', `${baseUrl}/api/v1/sites`, { token, json: body, headers: { 'idempotency-key': key } }),
        ),
      );
      expect(
        answers.every((answer) => answer.status === 201 || answer.status === 409),
        JSON.stringify(answers.map((answer) => answer.status)),
      ).toBe(true);
      const originals = answers.filter(
        (answer) => answer.status === 201 && answer.headers['idempotent-replayed'] === undefined,
      );
      expect(originals).toHaveLength(1);
      const id = originals[0]!.body.data.id;
      for (const answer of answers.filter((each) => each.status === 201)) expect(answer.body.data.id).toBe(id);
      for (const answer of answers.filter((each) => each.status === 409))
        expect(answer.body.type).toMatch(/idempotency-pending$/);
      // Once settled, the key replays the same site from either process (one after another: a replay
      // racing another request with the same key may be told it is pending, as with one process).
      for (let index = 0; index < 4; index++) {
        const replay = await send('POST', `${baseUrl}/api/v1/sites`, {
          token,
          json: body,
          headers: { 'idempotency-key': key },
        });
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body.data.id).toBe(id);
      }
      const listed = await send('GET', `${baseUrl}/api/v1/sites?siteCode=${encodeURIComponent(body.siteCode)}`, {
        token,
      });
      expect(listed.body.data.map((site: { id: string }) => site.id)).toEqual([id]);

      // Both API processes (children of the primary, not the primary itself) answered requests.
      const serving = pidsLogging(api.output(), '"incoming request"');
      expect(serving.size).toBe(2);
      expect(serving.has(api.child.pid!)).toBe(false);
    });

    it('concurrent creates without a key make one site each, and one site per siteCode', async () => {
      const { token } = await tenant();
      const bodies = Array.from({ length: 12 }, () => siteBody());
      const created = await Promise.all(
        bodies.map((body) => send('POST', `${baseUrl}/api/v1/sites`, { token, json: body })),
      );
      expect(created.map((answer) => answer.status)).toEqual(bodies.map(() => 201));
      expect(new Set(created.map((answer) => answer.body.data.id)).size).toBe(12);

      const same = siteBody();
      const racing = await Promise.all(
        Array.from({ length: 8 }, () => send('POST', `${baseUrl}/api/v1/sites`, { token, json: same })),
      );
      expect(racing.filter((answer) => answer.status === 201)).toHaveLength(1);
      for (const answer of racing.filter((each) => each.status !== 201)) {
        expect(answer.status).toBe(409);
        expect(answer.body.type).toMatch(/duplicate-resource$/);
      }
      const listed = await send('GET', `${baseUrl}/api/v1/sites?page[size]=100`, { token });
      expect(listed.body.data).toHaveLength(13);
    });

    it('delivers every event exactly once, by both workers', async () => {
      const { tenantId, token } = await tenant();
      await send('POST', `${baseUrl}/admin/v1/tenants/${tenantId}/projects`, {
        token: ADMIN_TOKEN,
        json: { projectId: 7, projectName: 'Scale' },
      });
      await send('POST', `${baseUrl}/admin/v1/tenants/${tenantId}/items`, {
        token: ADMIN_TOKEN,
        json: { itemId: 8, itemName: 'Kiosk' },
      });
      const site = siteBody();
      expect((await send('POST', `${baseUrl}/api/v1/sites`, { token, json: site })).status).toBe(201);
      const subscription = await send('POST', `${baseUrl}/api/v1/webhook-subscriptions`, {
        token,
        json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
      });
      expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);

      const count = 30;
      const visits = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          send('POST', `${baseUrl}/api/v1/site-visits`, {
            token,
            json: {
              clientSiteId: site.siteCode,
              clientTicketNumber: `SCALE-${index}`,
              description: 'Replace the card reader',
              serviceType: 'Break / Fix',
              jobInstructions: 'Bring a spare reader.',
              projectId: 7,
              itemName: 'Kiosk',
              startDate: '2026-12-01T09:00:00Z',
              dueDate: '2026-12-03T17:00:00Z',
              arePartsRequired: false,
              schedulingRule: 'Date Range',
            },
          }),
        ),
      );
      expect(visits.map((visit) => visit.status)).toEqual(visits.map(() => 201));
      const received = await endpoint.waitFor(count, 60_000);
      const settled = async () => {
        const deliveries = await send('GET', `${baseUrl}/admin/v1/deliveries?tenantId=${tenantId}`, {
          token: ADMIN_TOKEN,
        });
        return deliveries.body.data as Array<{ status: string; attempts: number; eventId: string }>;
      };
      await until(
        async () => (await settled()).every((delivery) => delivery.status === 'succeeded'),
        'deliveries did not settle',
        60_000,
      );
      const deliveries = await settled();
      expect(deliveries).toHaveLength(count);
      expect(deliveries.every((delivery) => delivery.attempts === 1)).toBe(true);

      // Exactly once: one request per event, each the first attempt, for exactly the visits created.
      const eventIds = received.map((request) => request.headers['x-svc-event-id']);
      expect(received).toHaveLength(count);
      expect(new Set(eventIds)).toEqual(new Set(deliveries.map((delivery) => delivery.eventId)));
      expect(new Set(received.map((request) => request.headers['x-svc-attempt']))).toEqual(new Set(['1']));
      const resources = received.map((request) => JSON.parse(request.body.toString('utf8')).resourceId);
      expect(new Set(resources)).toEqual(new Set(visits.map((visit) => visit.body.data.id)));

      // Both worker processes delivered some.
      for (const worker of workers)
        expect(pidsLogging(worker.output(), '"webhook delivered"').has(worker.child.pid!)).toBe(true);
    });

    it("the primary serves METRICS_PORT: the children's metrics summed, database figures once", async () => {
      const text = await (await fetch(metricsUrl)).text();
      const sitePosts = text
        .split('\n')
        .filter((line) => line.startsWith('http_requests_total{method="POST",route="/api/v1/sites",'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
      // The first two tests sent 16 + 4 + 12 creates, served by both children.
      expect(sitePosts).toBeGreaterThanOrEqual(32);
      expect(text.split('\n').filter((line) => line.startsWith('webhook_deliveries_due '))).toHaveLength(1);
      expect(text).toContain('db_pool_connections{state="total"}');
    });

    it('GET /metrics on the shared port answers the same sum, whichever child takes the connection', async () => {
      // One child's own registry held only its share of the creates (about half), another's the other share.
      const sitePosts = (text: string) =>
        text
          .split('\n')
          .filter((line) => line.startsWith('http_requests_total{method="POST",route="/api/v1/sites",'))
          .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
      const summed = sitePosts(await (await fetch(metricsUrl)).text());
      for (let scrape = 0; scrape < 6; scrape++) {
        // A new connection each time, so that both children answer some.
        const response = await fetch(`${baseUrl}/metrics`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, connection: 'close' },
        });
        expect(response.status).toBe(200);
        expect(sitePosts(await response.text())).toBe(summed);
      }
    });

    it('SIGTERM stops the API processes and the workers gracefully', async () => {
      const children = [...pidsLogging(api.output(), '"service started"')];
      expect(children).toHaveLength(2);
      for (const server of [api, ...workers]) server.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
      for (const worker of workers) expect(await worker.exited).toBe(0);
      for (const pid of children) expect(() => process.kill(pid, 0)).toThrow();
    });
  },
);
