/**
 * Starts the service: reads configuration, opens and migrates the database, resolves keys, provisions
 * the sandbox on first start, then runs what ROLE asks for: `api` serves HTTP, `worker` runs the webhook
 * delivery worker, `all` (the default) does both. SIGTERM/SIGINT stop accepting, let in-flight requests
 * and delivery attempts finish (recording their outcomes), close the database and exit 0.
 */
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { systemClock } from './lib/clock.js';
import { createLogger } from './lib/logger.js';
import { DeliveryWorker } from './modules/webhooks/worker.js';
import { Maintenance } from './runtime/maintenance.js';
import { resolveServerKeys } from './runtime/server-keys.js';
import { provisionSandbox, writeAdminToken, writeCredentialPacket } from './runtime/sandbox.js';

function banner(lines: string[]): void {
  process.stdout.write(`\n${'='.repeat(72)}\n${lines.join('\n')}\n${'='.repeat(72)}\n\n`);
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const logger = createLogger(config);
  const database = openDatabase(config);
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');

  const keys = await resolveServerKeys(config, database.db);
  const packet = await provisionSandbox(config, database);
  if (packet) {
    const file = writeCredentialPacket(config.dataDir, packet);
    banner([
      'Sandbox demo tenant created. Its credential packet (also in ' + file + '):',
      JSON.stringify(packet, null, 2),
    ]);
  }
  if (keys.adminTokenGenerated && keys.adminToken) {
    const file = writeAdminToken(config.dataDir, keys.adminToken);
    banner([`Operator API token (ADMIN_TOKEN unset; generated and kept in ${file}):`, keys.adminToken]);
  }

  const serveApi = config.role !== 'worker';
  const app = serveApi ? await buildApp(config, { database, keys, logger }) : undefined;
  if (app) await app.listen({ port: config.port, host: config.host });
  const worker =
    config.role !== 'api' ? new DeliveryWorker({ database, config: config.webhook, keys, logger: logger.child({ component: 'webhook-worker' }), clock: systemClock }) : undefined;
  await worker?.start();
  logger.info({ role: config.role }, serveApi ? 'service started' : 'delivery worker started');
  const maintenance = new Maintenance(database.db, systemClock, logger);
  maintenance.start();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    timer.unref();
    try {
      await Promise.all([app?.close(), worker?.stop()]);
      await maintenance.stop();
      await database.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`startup failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
