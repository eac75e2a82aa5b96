/**
 * Starts the service: reads configuration, opens and migrates the database, resolves keys, provisions
 * the sandbox on first start (a process that serves the API: the packet names its address), then runs what ROLE
 * asks for: `api` serves HTTP, `worker` runs the webhook
 * delivery worker, `all` (the default) does both. SIGTERM/SIGINT stop accepting, let in-flight requests
 * and delivery attempts finish (recording their outcomes), close the database and exit 0.
 *
 * With WEB_CONCURRENCY=N (N > 1, ROLE api or all) the process becomes a cluster primary: it migrates,
 * resolves keys and provisions once, runs the maintenance loop, then forks N children that share the
 * port (Node's cluster module) and each run ROLE as a single process would, minus those start-up steps.
 * The primary restarts a child that dies after it started serving, and on SIGTERM stops every child
 * gracefully before it exits.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { isExplainedOpeningFailure, openDatabase } from './db/database.js';
import { systemClock } from './lib/clock.js';
import { configOrExit, refuseArguments, warnOfUnsupportedNode } from './lib/entry-point.js';
import { createLogger, UNLOGGED } from './lib/logger.js';
import { ListenerRelay } from './modules/webhook-listeners/relay.js';
import { DeliveryWorker } from './modules/outbox/worker.js';
import { Maintenance } from './runtime/maintenance.js';
import { ensurePortsFree, PortUnavailable } from './runtime/port-check.js';
import { answerChildrenWithClusterMetrics } from './runtime/cluster-metrics.js';
import { clusterSource, Metrics, registrySource, startMetricsServer } from './runtime/metrics.js';
import { resolveServerKeys } from './runtime/server-keys.js';
import { workerProbes } from './runtime/worker-probes.js';
import { prepare } from './runtime/preparation.js';
import { listeningLine, type Progress, sinceProcessStart, startupProgress } from './runtime/startup-progress.js';

const SHUTDOWN_LIMIT_MS = 30_000;
/** A child that served and then died is forked again after this pause (a crash loop stays slow). */
const RESTART_DELAY_MS = 1_000;
/** The primary only runs maintenance: it needs few connections whatever DATABASE_POOL_SIZE says. */
const PRIMARY_POOL_SIZE = 2;

const USAGE = `usage: npm start (node dist/server.js)
  starts the service. It takes no arguments: it is configured by environment variables, e.g.
  PORT=3001 DATA_DIR=/tmp/site-services npm start; "Configuration" in README.md lists them all.`;

/** Calls `stop` once on SIGTERM or SIGINT, and exits 1 if stopping takes longer than the limit. */
function onStopSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => handle('SIGTERM'));
  process.on('SIGINT', () => handle('SIGINT'));
  // A cluster child whose primary is gone stops too, rather than serving on unsupervised.
  if (cluster.isWorker) process.on('disconnect', () => handle('primary gone'));
}

/** One process serving ROLE; a cluster child skips what its primary did before forking it. */
async function runProcess(config: Config, logger: Logger, progress: Progress): Promise<void> {
  const child = cluster.isWorker;
  if (!child) await ensurePortsFree(config);
  const database = await openDatabase(config, progress);
  const { keys, announce } = child
    ? { keys: await resolveServerKeys(config, database.db), announce: () => undefined }
    : await prepare(config, database, logger, progress, systemClock);

  const metrics = new Metrics({ database, clock: systemClock, defaultMetrics: true });
  metrics.joinCluster();

  const serveApi = config.role !== 'worker';
  const app = serveApi ? await buildApp(config, { database, keys, logger, metrics }) : undefined;
  const workerLogger = logger.child({ component: 'webhook-worker' });
  const worker =
    config.role !== 'api'
      ? new DeliveryWorker({
          database,
          config: config.webhook,
          keys,
          logger: workerLogger,
          clock: systemClock,
          metrics,
          listeners: new ListenerRelay({ database, clock: systemClock, logger: workerLogger }),
        })
      : undefined;
  const retention = { deliveryRetentionMs: config.webhook.historyRetentionMs, registry: metrics.registry };
  const maintenance = child ? undefined : new Maintenance(database.db, systemClock, logger, retention);
  // A cluster child's metrics are served by its primary (summed over the children). A process without the API
  // answers its health probes there too: it has no other listener.
  const probes = !app && worker ? workerProbes({ database, worker, problemBaseUrl: config.problemBaseUrl }) : undefined;
  const metricsServer =
    config.metricsPort !== undefined && !child
      ? await startMetricsServer(registrySource(metrics.registry), config.metricsPort, config.host, probes)
      : undefined;

  // From before the API answers: a SIGTERM that comes once it is reachable (a test or an orchestrator that
  // saw /ready) stops it gracefully, after the start under way has finished (bounded by the shutdown limit).
  let started!: () => void;
  const startedUp = new Promise<void>((resolve) => (started = resolve));
  // Without the API nothing of the process's own kept it running but its database connections (the worker's
  // timers never do): a database restart dropped them all at once and the process exited 0, its listener's
  // reconnection pending. It now runs until it is told to stop.
  const keepAlive = app ? undefined : setInterval(() => undefined, 2 ** 30);
  onStopSignal(logger, async () => {
    clearInterval(keepAlive);
    await startedUp;
    metricsServer?.close();
    await Promise.all([app?.close(), worker?.stop()]);
    await maintenance?.stop();
    await database.close();
  });

  // Fastify's own line per address (and per cluster child) is not logged: listeningLine says it once.
  if (app) await app.listen({ port: config.port, host: config.host, listenTextResolver: () => UNLOGGED });
  if (app && !child) {
    announce();
    const address = app.server.address();
    progress(listeningLine(config.host, typeof address === 'object' && address ? address.port : config.port));
  }
  await worker?.start();
  logger.info({ role: config.role }, serveApi ? 'service started' : 'delivery worker started');
  if (!app && !child) {
    announce();
    progress(`delivery worker running (${sinceProcessStart()} after start)`);
  }
  maintenance?.start();
  started();
}

/** The cluster primary: prepares once, forks WEB_CONCURRENCY children, supervises and stops them. */
async function runPrimary(config: Config, logger: Logger, progress: Progress): Promise<void> {
  await ensurePortsFree(config);
  const poolSize = Math.min(PRIMARY_POOL_SIZE, config.databasePoolSize);
  const database = await openDatabase({ ...config, databasePoolSize: poolSize }, progress);
  const { announce } = await prepare(config, database, logger, progress, systemClock);
  // The primary's own figures (its maintenance passes) are served with its children's sum.
  const own = new Registry();
  const retention = { deliveryRetentionMs: config.webhook.historyRetentionMs, registry: own };
  const maintenance = new Maintenance(database.db, systemClock, logger, retention);
  maintenance.start();
  const clusterMetrics = clusterSource(own);
  answerChildrenWithClusterMetrics(clusterMetrics);
  const metricsServer =
    config.metricsPort !== undefined
      ? await startMetricsServer(clusterMetrics, config.metricsPort, config.host)
      : undefined;

  let stopping = false;
  let announced = false;
  const serving = new WeakSet<Worker>();
  const fork = () => {
    const child = cluster.fork();
    child.on('listening', () => {
      if (!announced) {
        announce();
        progress(listeningLine(config.host, config.port));
      }
      announced = true;
      serving.add(child);
    });
  };
  cluster.on('exit', (child, code, signal) => {
    if (stopping) return;
    if (!serving.has(child)) {
      // A child that never served failed to start (a port in use, a bad key): retrying will not help.
      logger.fatal({ pid: child.process.pid, code, signal }, 'an API process failed to start; stopping');
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      void maintenance
        .stop()
        .then(() => database.close())
        .finally(() => process.exit(1));
      return;
    }
    logger.error({ pid: child.process.pid, code, signal }, 'an API process died; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, RESTART_DELAY_MS).unref();
  });
  for (let index = 0; index < config.webConcurrency; index++) fork();
  logger.info({ processes: config.webConcurrency, role: config.role }, 'cluster primary started');

  onStopSignal(logger, async () => {
    stopping = true;
    metricsServer?.close();
    const children = Object.values(cluster.workers ?? {}).filter((child): child is Worker => child !== undefined);
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.isDead()) return resolve();
            child.once('exit', () => resolve());
            child.process.kill('SIGTERM');
          }),
      ),
    );
    await maintenance.stop();
    await database.close();
  });
}

async function main(): Promise<void> {
  refuseArguments('site-services', USAGE);
  warnOfUnsupportedNode();
  const config = configOrExit();
  const logger = createLogger(config);
  const progress = startupProgress(config, logger);
  const clustered = cluster.isPrimary && config.role !== 'worker' && config.webConcurrency > 1;
  await (clustered ? runPrimary(config, logger, progress) : runProcess(config, logger, progress));
}

/**
 * What a failed start says: for a cause the operator can remove, what to do (no stack trace); otherwise the
 * error with its stack.
 */
function startupFailure(error: unknown): string {
  if (isExplainedOpeningFailure(error) || error instanceof PortUnavailable) return error.message;
  const failure = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (failure?.code === 'EADDRINUSE' && failure.port !== undefined)
    return (
      `port ${failure.port} of ${failure.address} is in use by another process (a site-services already ` +
      `running?): stop it, or start this one with PORT (or METRICS_PORT) set to a free port`
    );
  if (failure?.code === 'EADDRNOTAVAIL' && failure.port !== undefined)
    return (
      `${failure.address} (HOST) is not an address of this machine: set HOST to one of its addresses, ` +
      `127.0.0.1 (this machine only, the default) or 0.0.0.0 (every interface)`
    );
  if (failure?.code === 'EACCES' && failure.port !== undefined)
    return (
      `this user may not listen on port ${failure.port} of ${failure.address} (ports below 1024 need privileges): ` +
      `set PORT (or METRICS_PORT) to a port from 1024, behind a proxy that serves the public port`
    );
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

main().catch((error) => {
  process.stderr.write(`startup failed: ${startupFailure(error)}\n`);
  process.exit(1);
});
