/**
 * Webhook end to end: visit creates at a fixed rate, each one's ticket.created delivered by a worker to
 * the bench's receiver; latency from the event's occurredAt and from the arrival of the create's
 * response (after its commit) to the receiver's answer. Shared by both methods of the bench.
 */
import type { ChildProcess } from 'node:child_process';
import type pg from 'pg';
import type { RoundResult } from '../load.js';
import type { ReceiverStats } from '../receiver.js';
import { ask, sleep } from './processes.js';
import type { ScenarioResult } from './report.js';
import { percentile } from './stats.js';

export type EndToEnd = Extract<ScenarioResult, { kind: 'e2e' }>['e2e'];

export interface EndToEndSpec {
  loader: ChildProcess;
  receiver: ChildProcess;
  pool: pg.Pool;
  apiBaseUrl: string;
  token: string;
  /** A visit create's body; its clientTicketNumber is made unique per request. */
  visit: Record<string, unknown>;
  subscriptionId: string;
  rate: number;
  durationS: number;
}

/** Runs the paced creates and waits for their deliveries; `failures` counts creates that failed. */
export async function webhookEndToEnd(spec: EndToEndSpec): Promise<{ e2e: EndToEnd; failures: number }> {
  await ask(spec.receiver, { type: 'reset' });
  const [paced] = await ask<RoundResult[]>(spec.loader, {
    type: 'http',
    spec: {
      url: `${spec.apiBaseUrl}/api/v1/site-visits`,
      method: 'POST',
      connections: 4,
      overallRate: spec.rate,
      headers: { authorization: `Bearer ${spec.token}` },
      body: { template: spec.visit, unique: ['clientTicketNumber'] },
      durationS: spec.durationS,
      warmupS: 0,
      rounds: 1,
      recordCreated: true,
    },
  });
  // Creates still in flight when the load ended count too: the database says how many were made.
  await sleep(1_000);
  const created = Number(
    (await spec.pool.query('select count(*) from webhook_deliveries where subscription_id = $1', [spec.subscriptionId]))
      .rows[0].count,
  );
  const deadline = Date.now() + 30_000;
  while ((await ask<number>(spec.receiver, { type: 'count' })) < created && Date.now() < deadline) await sleep(50);
  const stats = await ask<ReceiverStats>(spec.receiver, { type: 'stats' });
  const latencies = [...stats.latenciesMs].sort((a, b) => a - b);
  // The commit lies between occurredAt (taken in the create, before its transaction commits) and the
  // arrival of the create's response: the latency from commit lies between these two measures.
  const fromResponse = Object.entries(paced!.createdAt ?? {})
    .filter(([id]) => stats.answeredAtByResource[id] !== undefined)
    .map(([id, at]) => stats.answeredAtByResource[id]! - at)
    .sort((a, b) => a - b);
  return {
    failures: paced!.non2xx + paced!.errors,
    e2e: {
      created,
      received: stats.count,
      duplicates: stats.count - stats.distinctDeliveries,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? NaN,
      fromResponse: {
        p50: percentile(fromResponse, 50),
        p99: percentile(fromResponse, 99),
        max: fromResponse.at(-1) ?? NaN,
        count: fromResponse.length,
      },
      createP50: paced!.p50,
    },
  };
}
