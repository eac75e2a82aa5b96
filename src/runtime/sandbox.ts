/**
 * First start of a sandbox: an empty database gets a demo tenant, so that an integrator can follow the
 * README at once. Its credential packet is printed once and written to DATA_DIR/credentials.json (0600).
 * Production never provisions anything by itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { AppDatabase } from '../db/database.js';
import { ALL_SCOPES } from '../modules/auth/scopes.js';
import { createItem, createProject } from '../modules/reference/service.js';
import { createSiteAsset } from '../modules/site-assets/service.js';
import { createSite } from '../modules/sites/service.js';
import { countTenants, findTenant } from '../modules/tenants/repository.js';
import { createTenant } from '../modules/tenants/service.js';

export interface CredentialPacket {
  baseUrl: string;
  tenantId: string;
  client_id: string;
  client_secret: string;
  scopes: string[];
  projectId: number;
  itemName: string;
  siteCode: string;
  siteAssetIds: number[];
}

const DEMO = {
  tenantName: 'Sandbox Demo Client',
  projectId: 1001,
  projectName: 'Demo Rollout',
  itemId: 2001,
  itemName: 'Demo Kiosk',
  siteCode: 'DEMO-001',
};

/** Provisions the demo tenant when the database has no tenant yet; returns its packet, or undefined. */
export async function provisionSandbox(
  config: Config,
  database: AppDatabase,
  now: Date,
  /** Told when this call is the one that provisions (for the start-up's progress line). */
  announce: () => void = () => undefined,
): Promise<CredentialPacket | undefined> {
  if (config.environment !== 'sandbox') return undefined;
  const { db } = database;
  // Several processes may start at once: one advisory lock makes exactly one of them provision.
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(7301001)`.execute(connection);
    try {
      if ((await countTenants(connection)) > 0) return undefined;
      announce();
      const tenant = await createTenant(connection, { name: DEMO.tenantName }, now);
      await createProject(
        connection,
        tenant.tenantId,
        { projectId: DEMO.projectId, projectName: DEMO.projectName },
        now,
      );
      await createItem(connection, tenant.tenantId, { itemId: DEMO.itemId, itemName: DEMO.itemName }, now);
      await connection.transaction().execute((tx) =>
        createSite(
          tx,
          tenant.tenantId,
          {
            name: 'Demo Store #1',
            siteCode: DEMO.siteCode,
            addressLine1: '100 Main Street',
            city: 'Springfield',
            stateRegion: 'IL',
            postalCode: '62701',
            country: 'US',
            keyRequired: false,
          },
          now,
        ),
      );
      const assets = [];
      for (const [index, display] of [
        'Kiosk A (front entrance)',
        'Kiosk B (checkout)',
        'Digital sign (window)',
      ].entries()) {
        assets.push(
          await createSiteAsset(
            connection,
            tenant.tenantId,
            {
              siteCode: DEMO.siteCode,
              uniqueId: `DEMO-ASSET-${index + 1}`,
              friendlyLocation: display.replace(/^.*\((.*)\)$/, '$1'),
              assetStatus: 'Installed',
              assetDisplay: display,
            },
            now,
          ),
        );
      }
      return {
        baseUrl: config.publicBaseUrl,
        tenantId: tenant.tenantId,
        client_id: tenant.credentials.client_id,
        client_secret: tenant.credentials.client_secret,
        scopes: [...ALL_SCOPES],
        projectId: DEMO.projectId,
        itemName: DEMO.itemName,
        siteCode: DEMO.siteCode,
        siteAssetIds: assets.map((asset) => asset.siteAssetId),
      };
    } finally {
      await sql`select pg_advisory_unlock(7301001)`.execute(connection);
    }
  });
}

/**
 * Whether the sandbox's database still waits for its demo tenant (it has no tenant): said by a ROLE=worker start,
 * which leaves provisioning to the API process whose address the packet names.
 */
export async function awaitsDemoTenant(config: Config, database: AppDatabase): Promise<boolean> {
  return config.environment === 'sandbox' && (await countTenants(database.db)) === 0;
}

/** Where DATA_DIR keeps the sandbox's credential packet (svc and the README's commands read it). */
const packetFile = (dataDir: string) => path.join(dataDir, 'credentials.json');

/**
 * The credential packet a previous start kept, with its baseUrl made `baseUrl` (this start's) when it names
 * another: a restart on another PORT (the first start's was taken, say) would otherwise leave svc and the
 * README's commands, which read the address from the packet, talking to the old one. Undefined without a
 * packet; a file that is not one (edited by hand) is left as it is.
 */
export function keptCredentialPacket(
  dataDir: string,
  baseUrl: string,
): { file: string; movedFrom?: string } | undefined {
  const file = packetFile(dataDir);
  let packet: CredentialPacket;
  try {
    packet = JSON.parse(fs.readFileSync(file, 'utf8')) as CredentialPacket;
  } catch {
    return fs.existsSync(file) ? { file } : undefined;
  }
  if (typeof packet?.baseUrl !== 'string' || packet.baseUrl === baseUrl) return { file };
  writeCredentialPacket(dataDir, { ...packet, baseUrl });
  return { file, movedFrom: packet.baseUrl };
}

/**
 * DATA_DIR is shared by starts on different databases when DATABASE_URL is set for one and not the other (the
 * default ./data): each database's first start writes credentials.json, which overwrote the other's, and the
 * other's restart then said its credentials were there while they were another tenant's (401 invalid_client).
 * So a packet of another database is kept aside as credentials-<its tenant>.json, and a restart puts its own
 * back. A tenant id names the file: one that is not an id (a packet edited by hand) is never used in a path.
 */
const TENANT_ID = /^tnt_[a-z0-9]+$/;
/** A packet kept aside: `asideFile`'s names. */
const ASIDE_FILE = /^credentials-tnt_[a-z0-9]+\.json$/;
const asideFile = (dataDir: string, tenantId: string) => path.join(dataDir, `credentials-${tenantId}.json`);

function readPacket(file: string): CredentialPacket | undefined {
  try {
    const packet = JSON.parse(fs.readFileSync(file, 'utf8')) as CredentialPacket;
    return TENANT_ID.test(packet?.tenantId) ? packet : undefined;
  } catch {
    return undefined;
  }
}

/** Before a first start writes its packet: the one in DATA_DIR (another database's) kept aside; its new name. */
export function setAsideOtherPacket(dataDir: string): string | undefined {
  const file = packetFile(dataDir);
  const packet = readPacket(file);
  if (!packet) return undefined;
  const aside = asideFile(dataDir, packet.tenantId);
  fs.renameSync(file, aside);
  return aside;
}

/**
 * A restart: when the packet in DATA_DIR is not this database's (its tenant is not in it), this database's own,
 * kept aside by another's first start, is put back and the other kept aside in turn. Says what it did; false
 * when DATA_DIR has no packet of this database (credentials.json, if any, is another's).
 */
export async function restoreOwnPacket(
  dataDir: string,
  database: AppDatabase,
  progress: (line: string) => void,
): Promise<boolean> {
  const hasTenant = async (tenantId: string) => (await findTenant(database.db, tenantId)) !== undefined;
  const file = packetFile(dataDir);
  const current = readPacket(file);
  if (current ? await hasTenant(current.tenantId) : fs.existsSync(file)) return true;
  const names = fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : [];
  for (const name of names.filter((entry) => ASIDE_FILE.test(entry))) {
    const kept = path.join(dataDir, name);
    const own = readPacket(kept);
    if (!own || !(await hasTenant(own.tenantId))) continue;
    const other = current && asideFile(dataDir, current.tenantId);
    if (other) fs.renameSync(file, other);
    fs.renameSync(kept, file);
    progress(
      `credentials.json was another database's${current ? ` (tenant ${current.tenantId}), kept as ${other}` : ''}; ` +
        `this database's put back from ${kept}`,
    );
    return true;
  }
  if (current)
    progress(
      `client credentials in ${file} are not this database's: its tenant ${current.tenantId} is not in it (written by ` +
        'a start on another database with this DATA_DIR), and DATA_DIR holds none of this database: give each ' +
        'database a DATA_DIR of its own',
    );
  return false;
}

export function writeCredentialPacket(dataDir: string, packet: CredentialPacket): string {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = packetFile(dataDir);
  fs.writeFileSync(file, `${JSON.stringify(packet, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

/** The operator token a previous start kept in DATA_DIR, if any. */
export function readAdminToken(dataDir: string): { file: string; token: string | undefined } {
  const file = path.join(dataDir, 'admin-token');
  try {
    return { file, token: fs.readFileSync(file, 'utf8').trim() };
  } catch {
    return { file, token: undefined };
  }
}

export function writeAdminToken(dataDir: string, token: string): string {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'admin-token');
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}
