/**
 * Phase B of `npm run bench`: webhooks, in a sandbox environment (see the note it adds). Visit creates with
 * two subscriptions (against B1 and B2), then deliveries to the bench's receiver: end to end at a fixed rate
 * of creates, and sustained from a backlog with 1 and then 2 worker processes (against B3, the receiver
 * alone).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ReceiverLoadSpec } from '../load.js';
import type { ReceiverStats } from '../receiver.js';
import { type BenchContext, bareDocuments, CONNECTIONS, compare, sqlJson, sqlText } from '../lib/bench-context.js';
import { ask, forkHelper, type Service, sleep, startService } from '../lib/processes.js';
import type { ScenarioResult } from '../lib/report.js';
import {
  accessToken,
  apiCall,
  deliveryCounts,
  provisionTenant,
  queueBacklog,
  SITE_TEMPLATE,
  subscribeReceiver,
  visitBody,
} from '../lib/setup.js';
import { webhookEndToEnd } from '../lib/webhook-e2e.js';

const E2E_RATE = 50;

/** What the phase's scenarios share: the sandbox API, its environment and the receiver. */
interface Sandbox {
  api: Service;
  env: Record<string, string>;
  receiver: ChildProcess;
  receiverPort: number;
  caFile: string;
  /** A subscription of the tenant (of `token`) to the receiver. */
  subscribe: (token: string, name: string) => Promise<string>;
}

type Drain = Extract<ScenarioResult, { kind: 'deliveries' }>['deliveries'];

export async function webhooksPhase(ctx: BenchContext): Promise<void> {
  const caFile = path.join(ctx.dataDir, 'receiver-ca.pem');
  const receiver = forkHelper('receiver.ts', [caFile]);
  const receiverPort = await ask<number>(receiver, { type: 'port' });
  const destination = `localhost:${receiverPort}`;
  ctx.notes.push(
    `Webhook scenarios run the service with ENVIRONMENT=sandbox, WEBHOOK_TEST_ALLOWED_DESTINATIONS=${destination} and NODE_EXTRA_CA_CERTS (the receiver's CA): ` +
      'production refuses a receiver on this machine (port 443 and public addresses only). Every other setting is as in production: configured keys, LOG_LEVEL=warn, ' +
      'the raised rate limit. The destination policy still runs at every delivery (DNS lookup of localhost through the system resolver, rules, pinned connection).',
  );
  const env = ctx.serviceEnv({
    ENVIRONMENT: 'sandbox',
    WEBHOOK_TEST_ALLOWED_DESTINATIONS: destination,
    NODE_EXTRA_CA_CERTS: caFile,
  });
  const api = await startService(env, { name: 'API (sandbox)', nodeArgs: ctx.nodeArgs });
  ctx.log(`webhook phase: receiver on ${destination}, API started (sandbox, pid ${api.pid})`);

  const subscribe = (token: string, name: string) => subscribeReceiver(api.baseUrl, token, destination, name);
  const sandbox: Sandbox = { api, env, receiver, receiverPort, caFile, subscribe };
  if (ctx.wants('visits')) await visitCreateScenario(ctx, sandbox);
  if (ctx.wants('webhooks')) await deliveryScenarios(ctx, sandbox);
  await api.stop();
  receiver.kill('SIGTERM');
}

/** Visit creates (two subscriptions each: an event and two deliveries) against B1 and B2. */
async function visitCreateScenario(ctx: BenchContext, { api, subscribe }: Sandbox): Promise<void> {
  const { database, keys, timing, bareUrl } = ctx;
  const tenant = await provisionTenant(api.baseUrl, keys.ADMIN_TOKEN, 'Bench visits tenant');
  const token = await accessToken(api.baseUrl, tenant);
  await apiCall(api.baseUrl, 'POST', '/api/v1/sites', token, { ...SITE_TEMPLATE, siteCode: 'V-1' });
  const subscriptions = [await subscribe(token, 'visits-a'), await subscribe(token, 'visits-b')];
  const template = visitBody(tenant, 'V-1', 'CAPTURE');
  const visitDocument = await apiCall(api.baseUrl, 'POST', '/api/v1/site-visits', token, template);
  await bareDocuments(ctx, { visit: visitDocument });
  const T = sqlText(tenant.tenantId);
  const snapshot = sqlJson(visitDocument);
  const siteId = (await database.pool.query('select id from sites where tenant_id = $1', [tenant.tenantId])).rows[0]
    .id as string;
  await compare(
    ctx,
    api,
    'create-visit',
    'POST /api/v1/site-visits (2 subscriptions) with Idempotency-Key',
    'report (B1, B2)',
    {
      url: `${api.baseUrl}/api/v1/site-visits`,
      method: 'POST',
      connections: CONNECTIONS,
      headers: { authorization: `Bearer ${token}` },
      idempotencyKey: true,
      body: { template, unique: ['clientTicketNumber'] },
      ...timing,
    },
    [
      'BEGIN;',
      `WITH v AS (INSERT INTO site_visits (id, tenant_id, site_id, client_ticket_number, description, service_type, job_instructions, project_id, item_id, start_date, due_date, are_parts_required, scheduling_rule, status, created_at, updated_at)
         VALUES ('visit_pgb' || md5(random()::text), ${T}, ${sqlText(siteId)}, 'PGB-' || md5(random()::text), 'Replace the card reader', 'Break / Fix', 'Bring a spare reader.', '1', '1', now(), now() + interval '2 days', false, 'Date Range', 'New', now(), now()) RETURNING id, created_at),
       e AS (INSERT INTO events (id, tenant_id, type, occurred_at, resource_type, resource_id, payload_version, data)
         SELECT 'evt_pgb' || md5(random()::text), ${T}, 'ticket.created', v.created_at, 'site-visits', v.id, '2026-11-01', ${sqlJson({ clientTicketNumber: 'PGB', clientSiteId: 'V-1', status: 'New' })} FROM v RETURNING id),
       d AS (INSERT INTO webhook_deliveries (id, tenant_id, event_id, event_type, subscription_id, status, next_attempt_at, created_at, updated_at)
         SELECT 'dlv_pgb' || md5(random()::text || s.id), ${T}, e.id, 'ticket.created', s.id, 'pending', now(), now(), now() FROM e, webhook_subscriptions s WHERE s.tenant_id = ${T} AND s.is_active)
       INSERT INTO idempotency_keys (tenant_id, resource_type, key, request_hash, resource_id, response_status, response_body, response_etag, completed_at, expires_at)
         SELECT ${T}, 'site-visits', md5(random()::text), md5(random()::text), v.id, 201, ${snapshot}, '"1"', now(), now() + interval '1 day' FROM v;`.replace(
        /\n\s*/g,
        ' ',
      ),
      `SELECT pg_notify('webhook_deliveries', '');`,
      'END;',
      '',
    ].join('\n'),
    {
      url: `${bareUrl}/bare/site-visits`,
      method: 'POST',
      connections: CONNECTIONS,
      body: { template, unique: ['clientTicketNumber'] },
      ...timing,
    },
    () => true,
  );
  // No worker ran: what these creates queued is not part of the delivery scenarios.
  await database.pool.query(`delete from webhook_deliveries where subscription_id = any($1)`, [subscriptions]);
}

/** Webhook deliveries: end to end at a fixed rate of creates, then sustained from a backlog. */
async function deliveryScenarios(ctx: BenchContext, sandbox: Sandbox): Promise<void> {
  const { api, env, receiver, receiverPort, caFile, subscribe } = sandbox;
  const { database, keys, log, profile } = ctx;
  const tenant = await provisionTenant(api.baseUrl, keys.ADMIN_TOKEN, 'Bench webhook tenant');
  const token = await accessToken(api.baseUrl, tenant);
  await apiCall(api.baseUrl, 'POST', '/api/v1/sites', token, { ...SITE_TEMPLATE, siteCode: 'E-1' });
  const subscriptionId = await subscribe(token, 'e2e');
  const workerEnv = { ...env, ROLE: 'worker' };
  const workerReady = async (pid: number) =>
    (
      await database.pool.query('select 1 from pg_stat_activity where application_name = $1', [
        `site-services listener webhook_deliveries ${pid}`,
      ])
    ).rowCount === 1;
  const workers = [await startService(workerEnv, { name: 'delivery worker 1', nodeArgs: ctx.nodeArgs, workerReady })];
  log(`delivery worker 1 started (pid ${workers[0]!.pid})`);

  // End to end at a fixed rate of creates.
  log(`webhook end to end: ${E2E_RATE} creates/s for ${profile.e2eS} s`);
  const { e2e: e2eFigures, failures } = await webhookEndToEnd({
    loader: ctx.loader,
    receiver,
    pool: database.pool,
    apiBaseUrl: api.baseUrl,
    token,
    visit: visitBody(tenant, 'E-1', 'E2E'),
    subscriptionId,
    rate: E2E_RATE,
    durationS: profile.e2eS,
  });
  if (failures > 0) ctx.notes.push(`Webhook end to end: ${failures} creates failed.`);
  ctx.scenarios.push({
    id: 'webhook-e2e',
    title: `Webhook end to end at ${E2E_RATE} events/s (1 worker)`,
    kind: 'e2e',
    target: 'p50 ≤ 50 ms, p99 ≤ 250 ms',
    e2e: e2eFigures,
    // Judged from the response (commit → receipt short of the response's own way back, a few ms): the
    // occurredAt figure also counts the create's work before its commit, which the target leaves out.
    met:
      e2eFigures.fromResponse.p50 <= 50 &&
      e2eFigures.fromResponse.p99 <= 250 &&
      e2eFigures.received === e2eFigures.created &&
      e2eFigures.duplicates === 0,
  });

  // Sustained deliveries from a backlog, with 1 and then 2 worker processes.
  const drains: Drain[] = [];
  for (const [workerCount, count] of [
    [1, profile.backlog1],
    [2, profile.backlog2],
  ] as const) {
    if (workers.length < workerCount) {
      workers.push(
        await startService(workerEnv, { name: `delivery worker ${workerCount}`, nodeArgs: ctx.nodeArgs, workerReady }),
      );
      log(`delivery worker ${workerCount} started (pid ${workers.at(-1)!.pid})`);
    }
    await database.pool.query(`delete from webhook_deliveries where subscription_id = $1`, [subscriptionId]);
    await ask(receiver, { type: 'reset' });
    log(`deliveries: backlog of ${count.toLocaleString('en-US')} with ${workerCount} worker process(es)`);
    await queueBacklog(database.pool, tenant.tenantId, subscriptionId, count, `w${workerCount}`);
    const limit = Date.now() + 120_000;
    while ((await ask<number>(receiver, { type: 'count' })) < count && Date.now() < limit) await sleep(100);
    await sleep(200);
    const stats = await ask<ReceiverStats>(receiver, { type: 'stats', eventPrefix: `evt_benchw${workerCount}` });
    const states = await deliveryCounts(database.pool, subscriptionId);
    const seconds = ((stats.lastAt ?? 0) - (stats.firstAt ?? 0)) / 1000;
    drains.push({
      workers: workerCount,
      count: stats.count,
      perS: (stats.count - 1) / seconds,
      seconds,
      duplicates: stats.count - stats.distinctDeliveries,
      states,
    });
  }
  log('B3: the receiver alone (same connections, same body size)');
  const b3 = await ask<{ rps: number }>(ctx.loader, {
    type: 'receiver',
    spec: {
      url: `https://localhost:${receiverPort}/hooks/baseline`,
      ca: readFileSync(caFile, 'utf8'),
      concurrency: 32,
      durationS: profile.durationS,
      bodyBytes: 400,
    } satisfies ReceiverLoadSpec,
  });
  for (const drain of drains) {
    const complete =
      drain.count === (drain.workers === 1 ? profile.backlog1 : profile.backlog2) && drain.duplicates === 0;
    ctx.scenarios.push({
      id: `deliveries-${drain.workers}`,
      title: `Sustained deliveries, ${drain.workers} worker process${drain.workers > 1 ? 'es' : ''}`,
      kind: 'deliveries',
      target: drain.workers === 2 ? '≥ 500 /s' : 'report',
      deliveries: drain,
      baselineDeliveries: { name: 'B3', perS: b3.rps },
      ratios: { B3: drain.perS / b3.rps },
      met: complete && (drain.workers === 2 ? drain.perS >= 500 : true),
    });
  }
  await Promise.all(workers.map((worker) => worker.stop()));
}
