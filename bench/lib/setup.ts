/**
 * What the bench prepares: a fresh PostgreSQL database, production keys, tenants provisioned through the
 * operator API, and bulk data loaded with SQL (generate_series: fast, and the rows are what the service
 * itself would write).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { PAYLOAD_VERSION } from '../../src/modules/outbox/types.js';
import { run, ROOT } from './processes.js';

export interface BenchDatabase {
  name: string;
  url: string;
  server: { host: string; port: number; user: string };
  pool: pg.Pool;
  drop(): Promise<void>;
}

export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `ss_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${randomBytes(2).toString('hex')}`;
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const target = new URL(serverUrl);
  target.pathname = `/${name}`;
  const url = target.toString();
  await run(process.execPath, ['dist/db/migrate-cli.js'], { env: { DATABASE_URL: url }, cwd: ROOT });
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  return {
    name,
    url,
    server: {
      host: target.hostname,
      port: Number(target.port || 5432),
      user: decodeURIComponent(target.username || 'postgres'),
    },
    pool,
    async drop() {
      await pool.end();
      const dropper = new pg.Client({ connectionString: admin.toString() });
      await dropper.connect();
      try {
        await dropper.query(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

export interface Keys {
  TOKEN_SIGNING_KEY: string;
  APP_SECRET: string;
  WEBHOOK_ENCRYPTION_KEY: string;
  ADMIN_TOKEN: string;
}

export function generateKeys(): Keys {
  return {
    TOKEN_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    APP_SECRET: randomBytes(48).toString('base64'),
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_TOKEN: `adm_${randomBytes(24).toString('base64url')}`,
  };
}

async function call(baseUrl: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export interface Tenant {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  itemName: string;
  projectId: number;
}

/** A tenant with a credential pair, Active project 1 and item "Bench Kiosk", through the operator API. */
export async function provisionTenant(baseUrl: string, adminToken: string, name: string): Promise<Tenant> {
  const created = await call(baseUrl, 'POST', '/admin/v1/tenants', adminToken, { name });
  const tenantId: string = created.data.tenantId;
  await call(baseUrl, 'POST', `/admin/v1/tenants/${tenantId}/projects`, adminToken, {
    projectId: 1,
    projectName: 'Bench Rollout',
  });
  await call(baseUrl, 'POST', `/admin/v1/tenants/${tenantId}/items`, adminToken, {
    itemId: 1,
    itemName: 'Bench Kiosk',
  });
  return {
    tenantId,
    clientId: created.data.credentials.client_id,
    clientSecret: created.data.credentials.client_secret,
    itemName: 'Bench Kiosk',
    projectId: 1,
  };
}

export async function accessToken(baseUrl: string, tenant: Tenant): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: tenant.clientId,
      client_secret: tenant.clientSecret,
    }),
  });
  if (!response.ok) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export { call as apiCall };

/** The id of loaded site number n of a load starting at `offset` (valid id characters, fixed length). */
export function loadedSiteId(offset: number, n: number): string {
  return `site_${String(offset + n).padStart(26, '0')}`;
}

/**
 * Inserts `count` sites for the tenant in one statement (ids from `loadedSiteId(offset, n)`, siteCode
 * `<codePrefix>-n`, uniqueID `U-n`), then analyses the table.
 */
export async function loadSites(
  pool: pg.Pool,
  tenantId: string,
  count: number,
  offset: number,
  codePrefix: string,
): Promise<void> {
  await pool.query(
    `insert into sites (id, tenant_id, site_code, name, address_line1, city, state_region, postal_code, country, unique_id, status, created_at, updated_at)
     select 'site_' || lpad(($3::bigint + n)::text, 26, '0'), $1, $4 || '-' || n, 'Store ' || n, n || ' Main Street', 'Springfield', 'IL', '62701', 'US',
            'U-' || n, 'Active', now(), now()
     from generate_series(1, $2::int) n`,
    [tenantId, count, offset, codePrefix],
  );
  await pool.query('vacuum analyze sites');
}

/** The sequence numbers of the tenant's sites (for cursors pointing anywhere in its list). */
export async function siteSeqRange(pool: pg.Pool, tenantId: string): Promise<{ min: number; max: number }> {
  const { rows } = await pool.query(
    'select min(seq)::float8 as min, max(seq)::float8 as max from sites where tenant_id = $1',
    [tenantId],
  );
  return { min: rows[0].min, max: rows[0].max };
}

/**
 * A backlog of `count` ticket.created events with one pending delivery each to `subscriptionId`, as
 * site-visit creates would have queued them, and the notification that wakes the workers.
 */
export async function queueBacklog(
  pool: pg.Pool,
  tenantId: string,
  subscriptionId: string,
  count: number,
  tag: string,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query(
      `with ev as (
         insert into events (id, tenant_id, type, occurred_at, resource_type, resource_id, payload_version, data)
         select 'evt_bench' || $3 || lpad(n::text, 8, '0'), $1, 'ticket.created', now(), 'site-visits', 'visit_bench' || $3 || lpad(n::text, 8, '0'), $4,
                jsonb_build_object('clientTicketNumber', 'T-' || n, 'clientSiteId', 'E-1', 'status', 'New')
         from generate_series(1, $2::int) n
         returning id
       )
       insert into webhook_deliveries (id, tenant_id, event_id, event_type, subscription_id, status, next_attempt_at, created_at, updated_at)
       select 'dlv_' || substr(md5(ev.id), 1, 26), $1, ev.id, 'ticket.created', $5, 'pending', now(), now(), now() from ev`,
      [tenantId, count, tag, PAYLOAD_VERSION, subscriptionId],
    );
    await client.query(`select pg_notify('webhook_deliveries', '')`);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

export async function deliveryCounts(pool: pg.Pool, subscriptionId: string): Promise<Record<string, number>> {
  const { rows } = await pool.query(
    `select status || case when attempts > 1 then ' (attempts > 1)' else '' end as status, count(*)::int as n
     from webhook_deliveries where subscription_id = $1 group by 1`,
    [subscriptionId],
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** The body of the bench's site creates (siteCode made unique per request). */
export const SITE_TEMPLATE = {
  name: 'Store',
  siteCode: 'NEW',
  addressLine1: '1 Main Street',
  city: 'Springfield',
  stateRegion: 'IL',
  postalCode: '62701',
  country: 'US',
};

/** The body of the bench's visit creates at the tenant's site `siteCode`. */
export function visitBody(tenant: Tenant, siteCode: string, ticket: string): Record<string, unknown> {
  return {
    clientSiteId: siteCode,
    description: 'Replace the card reader',
    clientTicketNumber: ticket,
    serviceType: 'Break / Fix',
    jobInstructions: 'Bring a spare reader. Call the store manager on arrival.',
    projectId: tenant.projectId,
    itemName: tenant.itemName,
    startDate: '2026-12-01T09:00:00Z',
    dueDate: '2026-12-03T17:00:00Z',
    arePartsRequired: false,
    schedulingRule: 'Date Range',
  };
}

/** A webhook subscription of the tenant to the bench's receiver at `destination` (host:port), for ticket.created. */
export async function subscribeReceiver(
  baseUrl: string,
  token: string,
  destination: string,
  name: string,
): Promise<string> {
  const created = await call(baseUrl, 'POST', '/api/v1/webhook-subscriptions', token, {
    targetUrl: `https://${destination}/hooks/${name}`,
    eventTypes: ['ticket.created'],
    secret: `bench secret for ${name} 0123456789`,
  });
  return created.data.id as string;
}
