/**
 * Prometheus metrics (prom-client). One `Metrics` per process, with a registry of its own (never the
 * global one: tests build many apps in one process). The HTTP layer counts requests, idempotency outcomes
 * and rate-limit refusals; the delivery worker counts attempt outcomes; the due-delivery figures and the
 * database pool are read when scraped.
 *
 * Served at `GET /metrics` on the main port behind the operator token (src/http/metrics-route.ts) and,
 * with METRICS_PORT, on a listener of its own without a token (`startMetricsServer`). With WEB_CONCURRENCY
 * above 1 the cluster primary serves METRICS_PORT with the sum over its children (prom-client's
 * AggregatorRegistry); the figures read from the database are taken from one child, not summed.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import { sql } from 'kysely';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AppDatabase } from '../db/database.js';
import { tenantSharesOf } from '../db/tenant-shares.js';
import { turnBatchTotals } from '../db/turn-batches.js';
import type { Clock } from '../lib/clock.js';
import { type MetricsSource, primaryMetricsSource } from './cluster-metrics.js';
import { RequestSeries } from './request-series.js';

export type { MetricsSource };

export type DeliveryOutcome = 'succeeded' | 'retry_scheduled' | 'failed';

/** Seconds; from a fast cached read to the statement timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();
  /** Every answered request: `http_requests_total` and `http_request_duration_seconds`. */
  readonly requests: RequestSeries;
  readonly deliveries: Counter<'outcome'>;
  readonly deliveryDuration: Histogram<'outcome'>;
  readonly deliveryClaims: Counter<'how'>;
  readonly idempotency: Counter<'outcome'>;
  readonly rateLimitRefusals: Counter;
  /** What GET /metrics on the main port answers: this process's registry, a cluster child's its primary's sum. */
  scrape: MetricsSource = registrySource(this.registry);

  /** `clock` dates the database gauges' ages (the oldest pending delivery). */
  constructor(options: { database?: AppDatabase; clock: Clock; defaultMetrics?: boolean }) {
    const registers = [this.registry];
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestSeries(this.registry, LATENCY_BUCKETS);
    this.deliveries = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome: succeeded, retry_scheduled (failed, another attempt is due) or failed (terminally).',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['succeeded', 'retry_scheduled', 'failed'] satisfies DeliveryOutcome[])
      this.deliveries.inc({ outcome }, 0);
    this.deliveryDuration = new Histogram({
      name: 'webhook_delivery_attempt_duration_seconds',
      help: 'Duration of one delivery attempt, from the destination check to the answer.',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.deliveryClaims = new Counter({
      name: 'webhook_delivery_claims_total',
      help: 'Deliveries claimed for an attempt by a worker of this process: from the queue, or at birth (queued claimed by the create that wrote their event).',
      labelNames: ['how'],
      registers,
    });
    for (const how of ['queue', 'birth']) this.deliveryClaims.inc({ how }, 0);
    this.idempotency = new Counter({
      name: 'idempotency_requests_total',
      help: 'Creates with an Idempotency-Key that were replayed (the stored answer) or refused as a conflict (the key reused with another body).',
      labelNames: ['outcome'],
      registers,
    });
    this.idempotency.inc({ outcome: 'replayed' }, 0);
    this.idempotency.inc({ outcome: 'conflict' }, 0);
    this.rateLimitRefusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 by the client rate limit.',
      registers,
    });

    const { database, clock } = options;
    if (database) this.addDatabaseGauges(database, clock);
  }

  /** Figures read from the database and the pool when scraped; one child's value in a cluster, not a sum. */
  private addDatabaseGauges(database: AppDatabase, clock: Clock): void {
    const registers = [this.registry];
    // Registered (so collected) before the due query starts: else that query, queued for a connection, was
    // counted as a client waiting for one at every scrape.
    const pool = database.pool;
    if (pool) {
      new Gauge({
        name: 'db_pool_connections',
        help: "Connections of this process's PostgreSQL pool: total open, idle, and clients waiting for one.",
        labelNames: ['state'],
        registers,
        collect() {
          this.set({ state: 'total' }, pool.totalCount);
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'waiting' }, pool.waitingCount);
        },
      });
      new Gauge({ name: 'db_pool_max_connections', help: 'DATABASE_POOL_SIZE of this process.', registers }).set(
        pool.options.max ?? 10,
      );
    }
    let due: Promise<Due | undefined> | undefined;
    // Both gauges come from one query per scrape; undefined when the database failed or was too slow.
    const readDue = () => {
      due ??= within(DATABASE_READ_LIMIT_MS, queryDue(database, clock.now())).finally(() => {
        setImmediate(() => {
          due = undefined;
        });
      });
      return due;
    };
    new DatabaseGauge({
      name: 'webhook_deliveries_due',
      help: 'Pending deliveries whose next attempt is due now (waiting for a worker).',
      aggregator: 'first',
      registers,
      async collect() {
        (this as DatabaseGauge).show((await readDue())?.count);
      },
    });
    new DatabaseGauge({
      name: 'webhook_oldest_due_delivery_age_seconds',
      help: 'How long the longest-waiting due delivery has been due; 0 when none is.',
      aggregator: 'first',
      registers,
      async collect() {
        (this as DatabaseGauge).show((await readDue())?.oldestSeconds);
      },
    });
    // Mirrors of running totals kept by the database's batches and shares, read when scraped.
    const mirror = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    const batches = turnBatchTotals(database.db);
    if (batches) {
      mirror(
        'db_statement_batches_total',
        'Batches of two or more one-statement writes or reads of one turn, each sent as one transaction.',
        () => batches.batches,
      );
      mirror('db_batched_statements_total', 'Statements sent in those batches.', () => batches.statements);
      mirror(
        'db_statement_batches_failed_total',
        'Batches that failed and whose statements were run again one by one.',
        () => batches.failed,
      );
    }
    const shares = tenantSharesOf(database.db)?.totals;
    if (shares) {
      mirror(
        'db_tenant_share_waits_total',
        "Requests that found their tenant's share of the pool (DATABASE_CONNECTIONS_PER_TENANT) taken and waited.",
        () => shares.waited,
      );
      mirror(
        'db_tenant_share_refusals_total',
        'Of those, the ones that got no connection within the wait (answered 503).',
        () => shares.refused,
      );
    }
  }

  /** In a cluster child: answer the primary's requests for this process's metrics. */
  joinCluster(): void {
    if (!cluster.isWorker) return;
    this.scrape = primaryMetricsSource();
    AggregatorRegistry.setRegistries([this.registry]);
    // The constructor installs the child's IPC listener (prom-client has no other way to ask for it).
    new AggregatorRegistry();
  }
}

/** How long a scrape waits for the figures read from the database (a scraper gives up after 10 s by default). */
export const DATABASE_READ_LIMIT_MS = 2_000;

/**
 * A gauge read from the database when scraped, left out of the scrape (no sample) when it could not be read:
 * an unreachable or stuck database must not fail the whole scrape, since an outage is when the request counts
 * (its 503s), the pool and the process figures are needed most. No sample rather than the last value or 0,
 * so that nothing claims the queue is empty while it cannot be read.
 */
class DatabaseGauge extends Gauge {
  private unread = false;

  show(value: number | undefined): void {
    this.unread = value === undefined;
    if (value !== undefined) this.set(value);
  }

  override async get() {
    const metric = await super.get();
    return this.unread ? { ...metric, values: [] } : metric;
  }
}

/** The work's value, or undefined when it fails or takes longer than `ms`. */
export async function within<T>(ms: number, work: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

interface Due {
  count: number;
  oldestSeconds: number;
}

async function queryDue(database: AppDatabase, now: Date): Promise<Due> {
  const { rows } = await sql<{ count: number; oldest: Date | null }>`
    select count(*)::int as count, min(next_attempt_at) as oldest from webhook_deliveries
    where status = 'pending' and next_attempt_at <= ${now}
  `.execute(database.db);
  const oldest = rows[0]?.oldest;
  return {
    count: rows[0]?.count ?? 0,
    oldestSeconds: oldest ? Math.max(0, (now.getTime() - new Date(oldest).getTime()) / 1000) : 0,
  };
}

export function registrySource(registry: Registry): MetricsSource {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}

/**
 * The cluster primary's view: its children's metrics, summed (gauges read from the database: the first), and
 * the primary's own (`own`: its maintenance passes, names no child has).
 */
export function clusterSource(own?: Registry): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return async () => {
    const children = await aggregator.clusterMetrics();
    return { contentType: aggregator.contentType, body: own ? `${children}\n${await own.metrics()}` : children };
  };
}

/** Answers a GET of `path` other than /metrics and says so, or leaves it (false): a worker's probes. */
export type OtherAnswers = (path: string, response: http.ServerResponse) => boolean;

/**
 * A plain HTTP listener answering GET /metrics (METRICS_PORT): for a scraper on a private network. `others`
 * answers what else the process serves there (a ROLE=worker process's /health and /ready: worker-probes.ts).
 */
export async function startMetricsServer(
  source: MetricsSource,
  port: number,
  host: string,
  others?: OtherAnswers,
): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const path = request.url?.split('?', 1)[0] ?? '';
    if (request.method === 'GET' && others?.(path, response)) return;
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    source().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      (error: unknown) =>
        response
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
