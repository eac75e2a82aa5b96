/**
 * Phase C of `npm run bench`: the cost of a page of sites with 1,000 and with 1,000,000 sites in the
 * tenant (100,000 in a quick run), the first page and pages at random positions, one connection.
 */
import { CursorCodec } from '../../src/http/pagination.js';
import { deriveKey } from '../../src/lib/secrets.js';
import type { LatencySpec, RoundResult } from '../load.js';
import { type BenchContext, SITE_OFFSETS } from '../lib/bench-context.js';
import { ask, startService } from '../lib/processes.js';
import { accessToken, loadSites, provisionTenant, siteSeqRange, type Tenant } from '../lib/setup.js';
import { summarise } from '../lib/stats.js';

const SMALL_TENANT = 1_000;

export async function listScalePhase(ctx: BenchContext): Promise<void> {
  const { database, keys, log, profile } = ctx;
  const api = await startService(ctx.serviceEnv(), { name: 'API (production)', nodeArgs: ctx.nodeArgs });
  const small = await provisionTenant(api.baseUrl, keys.ADMIN_TOKEN, 'Bench list tenant (small)');
  const big = await provisionTenant(api.baseUrl, keys.ADMIN_TOKEN, 'Bench list tenant (big)');
  log(`loading ${SMALL_TENANT.toLocaleString('en-US')} and ${profile.bigTenant.toLocaleString('en-US')} sites`);
  await loadSites(database.pool, small.tenantId, SMALL_TENANT, SITE_OFFSETS.small, 'SMALL');
  const loadStarted = Date.now();
  await loadSites(database.pool, big.tenantId, profile.bigTenant, SITE_OFFSETS.big, 'BIG');
  log(`loaded in ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);
  await database.pool.query('checkpoint');
  const cursors = new CursorCodec(deriveKey(keys.APP_SECRET, 'cursor'));
  const measure = async (tenant: Tenant, deep: boolean) => {
    const token = await accessToken(api.baseUrl, tenant);
    const range = await siteSeqRange(database.pool, tenant.tenantId);
    const paths = deep
      ? Array.from({ length: 2_000 }, () => {
          const seq = Math.floor(range.min + Math.random() * (range.max - range.min - 200));
          return `/api/v1/sites?page[size]=100&page[after]=${encodeURIComponent(cursors.encode('sites', tenant.tenantId, seq))}`;
        })
      : ['/api/v1/sites?page[size]=100'];
    const spec: LatencySpec = {
      origin: api.baseUrl,
      paths,
      headers: { authorization: `Bearer ${token}` },
      durationS: profile.listDurationS,
      warmupS: profile.warmupS,
      rounds: profile.rounds,
    };
    return summarise(await ask<RoundResult[]>(ctx.loader, { type: 'latency', spec }));
  };
  for (const deep of [false, true]) {
    const label = deep ? 'pages at random positions' : 'first page';
    log(`list cost, ${label}: ${SMALL_TENANT.toLocaleString('en-US')} sites`);
    const smallFigures = await measure(small, deep);
    log(`list cost, ${label}: ${profile.bigTenant.toLocaleString('en-US')} sites`);
    const bigFigures = await measure(big, deep);
    const growth = bigFigures.p50 / smallFigures.p50;
    ctx.scenarios.push({
      id: `list-growth${deep ? '-deep' : ''}`,
      title: `GET /api/v1/sites?page[size]=100, ${label}: ${profile.bigTenant.toLocaleString('en-US')} vs ${SMALL_TENANT.toLocaleString('en-US')} sites (1 connection)`,
      kind: 'growth',
      connections: 1,
      target: 'p50 growth ≤ 1.5×',
      growth: {
        small: smallFigures,
        big: bigFigures,
        factor: growth,
        smallCount: SMALL_TENANT,
        bigCount: profile.bigTenant,
      },
      met: growth <= 1.5,
    });
  }
  await api.stop();
}
