/**
 * What a start does once before it serves (a cluster's primary for its children): migrate the database, resolve
 * the server keys, provision the sandbox on its first start, and keep the secrets it made in DATA_DIR, to be
 * printed once the service listens. Provisioning and printing are an API process's: a ROLE=worker start only
 * migrates and resolves the keys.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AppDatabase } from '../db/database.js';
import { migrateToLatest, migrationState } from '../db/migrate.js';
import type { Clock } from '../lib/clock.js';
import {
  awaitsDemoTenant,
  provisionSandbox,
  readAdminToken,
  restoreOwnPacket,
  setAsideOtherPacket,
  writeAdminToken,
  writeCredentialPacket,
} from './sandbox.js';
import { resolveServerKeys, type ServerKeys } from './server-keys.js';
import { type Progress, reportKeptFiles, reportOperatorSurfaces } from './startup-progress.js';

function banner(lines: string[]): void {
  process.stdout.write(`\n${'='.repeat(72)}\n${lines.join('\n')}\n${'='.repeat(72)}\n\n`);
}

/**
 * What every deployment does once before serving: migrate, resolve keys, provision the sandbox (an API process;
 * a worker says that it leaves the sandbox to one). The secrets
 * made here (the packet, a generated operator token) are kept in DATA_DIR at once, so that none is lost, but
 * `announce` prints them only once the service listens: a start that fails to listen shows no credentials.
 */
export async function prepare(
  config: Config,
  database: AppDatabase,
  logger: Logger,
  progress: Progress,
  clock: Clock,
): Promise<{ keys: ServerKeys; announce: () => void }> {
  const { pending, unknown } = await migrationState(database.db);
  if (pending.length > 0 || unknown.length > 0) {
    if (pending.length > 0) progress(`migrating the database (${pending.length} pending: ${pending.join(', ')})…`);
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    if (unknown.length > 0)
      logger.warn({ unknown }, 'the database was migrated by a newer release; serving its schema as it is');
  }
  const keys = await resolveServerKeys(config, database.db);
  // A worker serves no API: a packet it printed would name a port nobody answers on (its own PORT, unused), and
  // the operator token a surface it does not have. The first API process on the database provisions and prints.
  if (config.role === 'worker') {
    if (await awaitsDemoTenant(config, database))
      progress(
        'no tenant yet: a worker serves no API, so the sandbox demo tenant, its credential packet and the operator ' +
          'token come with the first start of a ROLE=api or ROLE=all process on this database',
      );
    reportOperatorSurfaces(config, progress, logger);
    return { keys, announce: () => undefined };
  }
  const packet = await provisionSandbox(config, database, clock.now(), () =>
    progress('provisioning the sandbox tenant…'),
  );
  const banners: string[][] = [];
  if (packet) {
    const aside = setAsideOtherPacket(config.dataDir);
    if (aside)
      progress(`DATA_DIR held another database's credential packet: kept as ${aside}, for a start on that database`);
    const file = writeCredentialPacket(config.dataDir, packet);
    banners.push([
      `Sandbox demo tenant created. Its credential packet (also in ${file}):`,
      JSON.stringify(packet, null, 2),
    ]);
  } else if (config.environment === 'sandbox' && (await restoreOwnPacket(config.dataDir, database, progress)))
    reportKeptFiles(config.dataDir, config.publicBaseUrl, progress);
  if (keys.adminTokenGenerated && keys.adminToken) {
    const kept = readAdminToken(config.dataDir);
    if (kept.token === keys.adminToken) progress(`operator API token is in ${kept.file}`);
    else {
      const file = writeAdminToken(config.dataDir, keys.adminToken);
      banners.push([`Operator API token (ADMIN_TOKEN unset; generated and kept in ${file}):`, keys.adminToken]);
    }
  }
  reportOperatorSurfaces(config, progress, logger);
  return { keys, announce: () => banners.splice(0).forEach(banner) };
}
