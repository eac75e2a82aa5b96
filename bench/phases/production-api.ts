/**
 * Phase A of `npm run bench`: the production API, reads and creates of sites (each against B1 and B2),
 * and concurrent return-label uploads (the RSS of the service while they stream, against B2).
 */
import { readFile } from 'node:fs/promises';
import type { UploadResult, UploadSpec } from '../load.js';
import {
  type BenchContext,
  bareDocuments,
  CONNECTIONS,
  compare,
  SITE_OFFSETS,
  sqlJson,
  sqlText,
} from '../lib/bench-context.js';
import { ask, rssBytes, type Service, sleep, startService } from '../lib/processes.js';
import {
  accessToken,
  apiCall,
  loadedSiteId,
  loadSites,
  provisionTenant,
  SITE_TEMPLATE,
  type Tenant,
  visitBody,
} from '../lib/setup.js';
import { percentile } from '../lib/stats.js';

const UPLOAD_BYTES = 10 * 1024 * 1024;
const UPLOADS = 10;

export async function productionApiPhase(ctx: BenchContext): Promise<void> {
  const { database, keys, log, profile, timing, wants, bareUrl } = ctx;
  const api = await startService(ctx.serviceEnv(), { name: 'API (production)', nodeArgs: ctx.nodeArgs });
  log(`API started (ENVIRONMENT=production, ROLE=api, WEB_CONCURRENCY=${ctx.webConcurrency}, pid ${api.pid})`);
  const tenant = await provisionTenant(api.baseUrl, keys.ADMIN_TOKEN, 'Bench tenant');
  const token = await accessToken(api.baseUrl, tenant);
  const headers = { authorization: `Bearer ${token}` };
  log(`loading ${profile.sites.toLocaleString('en-US')} sites`);
  await loadSites(database.pool, tenant.tenantId, profile.sites, SITE_OFFSETS.main, 'BENCH');
  const ids = Array.from({ length: profile.sites }, (_, index) => loadedSiteId(SITE_OFFSETS.main, index + 1));
  const T = sqlText(tenant.tenantId);

  const siteDocument = await apiCall(api.baseUrl, 'GET', `/api/v1/sites/${ids[0]}`, token);
  const listDocument = await apiCall(api.baseUrl, 'GET', '/api/v1/sites?page[size]=100', token);
  const siteTemplate = SITE_TEMPLATE;
  const createdDocument = await apiCall(api.baseUrl, 'POST', '/api/v1/sites', token, {
    ...siteTemplate,
    siteCode: 'CAPTURE-1',
  });
  await bareDocuments(ctx, { site: siteDocument, list: listDocument, created: createdDocument });

  if (wants('get')) {
    await compare(
      ctx,
      api,
      'get-site',
      'GET /api/v1/sites/{id}',
      '≥ 0.35 × B1, p99 ≤ 25 ms',
      {
        url: `${api.baseUrl}/api/v1/sites/x`,
        method: 'GET',
        connections: CONNECTIONS,
        headers,
        paths: ids.map((id) => `/api/v1/sites/${id}`),
        ...timing,
      },
      `\\set n random(1, ${profile.sites})\nSELECT * FROM sites WHERE tenant_id = ${T} AND id = 'site_' || lpad(:n::text, 26, '0');\n`,
      { url: `${bareUrl}/bare/site`, method: 'GET', connections: CONNECTIONS, ...timing },
      (figures, ratios) => ratios.B1! >= 0.35 && figures.p99 <= 25,
    );
  }
  if (wants('list')) {
    await compare(
      ctx,
      api,
      'list-sites',
      'GET /api/v1/sites?page[size]=100',
      'report (B1, B2)',
      {
        url: `${api.baseUrl}/api/v1/sites?page[size]=100`,
        method: 'GET',
        connections: CONNECTIONS,
        headers,
        ...timing,
      },
      `SELECT * FROM sites WHERE tenant_id = ${T} ORDER BY seq LIMIT 101;\n`,
      { url: `${bareUrl}/bare/sites`, method: 'GET', connections: CONNECTIONS, ...timing },
      () => true,
    );
  }
  if (wants('create')) {
    const snapshot = sqlJson(createdDocument);
    await compare(
      ctx,
      api,
      'create-site',
      'POST /api/v1/sites with Idempotency-Key',
      '≥ 0.35 × B1',
      {
        url: `${api.baseUrl}/api/v1/sites`,
        method: 'POST',
        connections: CONNECTIONS,
        headers,
        idempotencyKey: true,
        body: { template: siteTemplate, unique: ['siteCode'] },
        ...timing,
      },
      [
        'BEGIN;',
        `INSERT INTO sites (id, tenant_id, site_code, name, address_line1, city, state_region, postal_code, country, status, created_at, updated_at) VALUES ('site_pgb' || md5(random()::text), ${T}, 'PGB-' || md5(random()::text), 'Store', '1 Main Street', 'Springfield', 'IL', '62701', 'US', 'Active', now(), now()) RETURNING *;`,
        `INSERT INTO idempotency_keys (tenant_id, resource_type, key, request_hash, resource_id, response_status, response_body, response_etag, completed_at, expires_at) VALUES (${T}, 'sites', md5(random()::text), md5(random()::text), 'site_pgb', 201, ${snapshot}, '"1"', now(), now() + interval '1 day');`,
        'END;',
        '',
      ].join('\n'),
      {
        url: `${bareUrl}/bare/sites`,
        method: 'POST',
        connections: CONNECTIONS,
        body: { template: siteTemplate, unique: ['siteCode'] },
        ...timing,
      },
      (_figures, ratios) => ratios.B1! >= 0.35,
    );
  }
  if (wants('uploads')) await uploadScenario(ctx, api, tenant, token);
  await api.stop();
}

/** Sums the RSS of a process and its direct children (the cluster's API processes). */
async function treeRss(pid: number): Promise<number> {
  let children: number[] = [];
  try {
    children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no children listed
  }
  const sizes = await Promise.all([pid, ...children].map((each) => rssBytes(each)));
  return sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
}

async function uploadScenario(ctx: BenchContext, api: Service, tenant: Tenant, token: string): Promise<void> {
  ctx.log('uploads: 10 concurrent 10 MiB return labels');
  const visitIds: string[] = [];
  for (let index = 0; index < UPLOADS; index++) {
    const visit = await apiCall(
      api.baseUrl,
      'POST',
      '/api/v1/site-visits',
      token,
      visitBody(tenant, 'BENCH-1', `UPLOAD-${index}`),
    );
    visitIds.push(visit.data.id);
  }
  const spec: UploadSpec = {
    urls: visitIds.map((id) => `${api.baseUrl}/api/v1/site-visits/${id}/return-label`),
    token,
    sizeBytes: UPLOAD_BYTES,
    rounds: ctx.profile.uploadRounds,
  };
  const before = await treeRss(api.pid);
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await treeRss(api.pid));
      await sleep(5);
    }
  })();
  const rounds = await ask<UploadResult[]>(ctx.loader, { type: 'uploads', spec });
  sampling = false;
  await sampler;
  const bareRounds = await ask<UploadResult[]>(ctx.loader, {
    type: 'uploads',
    spec: { ...spec, urls: visitIds.map(() => `${ctx.bareUrl}/bare/upload`) },
  });
  const throughput = (results: UploadResult[]) => {
    const bytes = results.length * UPLOADS * UPLOAD_BYTES;
    const seconds = results.reduce((sum, round) => sum + round.wallMs, 0) / 1000;
    return bytes / seconds / (1024 * 1024);
  };
  const statuses: Record<string, number> = {};
  for (const round of rounds)
    for (const [status, count] of Object.entries(round.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  const growthMb = (peak - before) / (1024 * 1024);
  const mbps = throughput(rounds);
  const bareMbps = throughput(bareRounds);
  const latencies = rounds.flatMap((round) => round.latenciesMs).sort((a, b) => a - b);
  ctx.scenarios.push({
    id: 'uploads',
    title: '10 concurrent 10 MiB return-label uploads',
    kind: 'uploads',
    connections: UPLOADS,
    target: 'RSS growth ≤ 64 MB',
    met: growthMb <= 64 && Object.keys(statuses).every((status) => status === '201'),
    upload: {
      mbPerS: mbps,
      rssBeforeMb: before / (1024 * 1024),
      rssPeakMb: peak / (1024 * 1024),
      growthMb,
      statuses,
      p50Ms: percentile(latencies, 50),
      maxMs: latencies.at(-1) ?? NaN,
      rounds: rounds.length,
    },
    baselineUpload: { name: 'B2', mbPerS: bareMbps },
    ratios: { B2: mbps / bareMbps },
  });
}
