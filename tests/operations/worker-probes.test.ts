/**
 * A ROLE=worker process's health probes on its METRICS_PORT listener (it has no API port): GET /health while
 * the process answers; GET /ready only while its delivery worker runs and the database answers, else 503
 * service-unavailable naming what is wrong. Before, an orchestrator had only the process to watch: a worker
 * whose loop had stopped or that could not reach the database looked alive and ready.
 */
import type http from 'node:http';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { registrySource, startMetricsServer } from '../../src/runtime/metrics.js';
import { workerProbes } from '../../src/runtime/worker-probes.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestWorker, TestReceiver } from '../helpers/webhooks.js';

let t: TestApp;
let receiver: TestReceiver;
const servers: http.Server[] = [];

beforeAll(async () => {
  t = await startTestApp();
  receiver = await TestReceiver.start();
});
afterAll(async () => {
  for (const server of servers) server.close();
  await receiver?.close();
  await t?.close();
});

/** The METRICS_PORT listener of a worker process with these probes; its address. */
async function listener(probes: ReturnType<typeof workerProbes>): Promise<string> {
  const server = await startMetricsServer(registrySource(t.metrics.registry), 0, '127.0.0.1', probes);
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function get(url: string) {
  const response = await fetch(url);
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, type: response.headers.get('content-type'), body };
}

/** A database whose every connection is waited for for ever (a pool exhausted, a server that does not answer). */
function stuckDatabase(): Kysely<Database> {
  class StuckDriver extends DummyDriver {
    override acquireConnection(): Promise<DatabaseConnection> {
      return new Promise(() => undefined);
    }
  }
  return databaseOf(new StuckDriver());
}

function databaseOf(driver: DummyDriver): Kysely<Database> {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

describe("a worker process's probes on METRICS_PORT", () => {
  it('answers /ready only while its delivery worker runs; /health and /metrics throughout', async () => {
    const worker = createTestWorker(t, receiver);
    const base = await listener(
      workerProbes({ database: t.database, worker, problemBaseUrl: t.config.problemBaseUrl }),
    );

    const starting = await get(`${base}/ready`);
    expect(starting).toMatchObject({ status: 503, type: 'application/problem+json; charset=utf-8' });
    expect(starting.body).toEqual({
      type: `${t.config.problemBaseUrl}/service-unavailable`,
      title: 'Service unavailable',
      status: 503,
      detail: 'The delivery worker is not running (starting or stopping).',
    });
    expect(await get(`${base}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });

    await worker.start();
    expect(await get(`${base}/ready`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);

    await worker.stop();
    expect(await get(`${base}/ready`)).toMatchObject({ status: 503 });
    expect(await get(`${base}/health`)).toMatchObject({ status: 200 });
  });

  it('is not ready while the database does not answer within its limit, and says so', async () => {
    const base = await listener(
      workerProbes({
        database: { db: stuckDatabase() },
        worker: { running: true },
        problemBaseUrl: t.config.problemBaseUrl,
        databaseLimitMs: 200,
      }),
    );
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(((await ready.json()) as { detail: string }).detail).toBe(
      'The database is not reachable (no answer to select 1 within 200 ms).',
    );
    expect(await get(`${base}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('says what the database answered when it refused rather than that it did not answer', async () => {
    class RefusingDriver extends DummyDriver {
      override acquireConnection(): Promise<DatabaseConnection> {
        return Promise.reject(new Error('database "ops" is not currently accepting connections'));
      }
    }
    const base = await listener(
      workerProbes({
        database: { db: databaseOf(new RefusingDriver()) },
        worker: { running: true },
        problemBaseUrl: t.config.problemBaseUrl,
      }),
    );
    expect((await get(`${base}/ready`)).body).toMatchObject({
      status: 503,
      detail: 'The database is not reachable (select 1 failed: database "ops" is not currently accepting connections).',
    });
  });

  it('is not ready once the database is gone', async () => {
    const own = await startTestApp();
    try {
      const base = await listener(
        workerProbes({ database: own.database, worker: { running: true }, problemBaseUrl: t.config.problemBaseUrl }),
      );
      expect((await get(`${base}/ready`)).status).toBe(200);
      await own.database.close();
      expect((await get(`${base}/ready`)).body.detail).toMatch(/^The database is not reachable/);
    } finally {
      await own.close();
    }
  });
});
