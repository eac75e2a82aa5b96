/**
 * The stage of the delivery fault suites: a fault stage (tests/reliability/lib/service.ts) with an API
 * process, the HTTPS test receiver trusted by the worker processes (NODE_EXTRA_CA_CERTS) and allowed as
 * a destination, a tenant with a site, project and item, and events produced the way clients produce
 * them: site-visit creates through the API (each emits ticket.created).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Endpoint, TestReceiver } from '../../helpers/webhooks.js';
import { type VisitTenant, visitBody, visitTenant } from '../../helpers/visits.js';
import { type FaultStage, faultStage } from './service.js';
import { TcpProxy } from './tcp-proxy.js';

export interface WebhookStage {
  stage: FaultStage;
  receiver: TestReceiver;
  /** The receiver as subscriptions reach it: through a proxy that can refuse or hang connections. */
  front: TcpProxy;
  tenant: VisitTenant;
  /** Environment of a worker process: the receiver's CA and short delivery settings. */
  workerEnv: Record<string, string>;
  /** A subscription of the tenant to ticket.created at `endpoint` (through the proxy). */
  subscribe(endpoint: Endpoint): Promise<string>;
  /** Creates `count` site visits, `concurrency` at a time; resolves with their ids. */
  produceEvents(count: number, concurrency?: number): Promise<string[]>;
  close(): Promise<void>;
}

export async function webhookStage(suite: string, workerEnv: Record<string, string>): Promise<WebhookStage> {
  const stage = await faultStage(suite);
  const receiver = await TestReceiver.start();
  const front = await TcpProxy.start({ port: receiver.port });
  const caFile = path.join(stage.env.DATA_DIR!, 'receiver-ca.pem');
  fs.writeFileSync(caFile, receiver.caPem);
  stage.env.WEBHOOK_TEST_ALLOWED_DESTINATIONS = `localhost:${front.port}`;
  await stage.startApi();
  const tenant = await visitTenant(stage.operator);
  const http = stage.operator.http;
  return {
    stage,
    receiver,
    front,
    tenant,
    workerEnv: { NODE_EXTRA_CA_CERTS: caFile, ...workerEnv },
    async subscribe(endpoint) {
      const response = await http.post('/api/v1/webhook-subscriptions', {
        token: tenant.fullToken,
        json: {
          targetUrl: `https://localhost:${front.port}${endpoint.path}`,
          eventTypes: ['ticket.created'],
          secret: 'a shared secret, 16+',
        },
      });
      if (response.status !== 201) throw new Error(`subscribe failed: ${response.status} ${response.text}`);
      return response.body.data.id;
    },
    async produceEvents(count, concurrency = 8) {
      const ids: string[] = [];
      let next = 0;
      const lane = async () => {
        while (next < count) {
          next++;
          const response = await http.post('/api/v1/site-visits', { token: tenant.fullToken, json: visitBody(tenant) });
          if (response.status !== 201) throw new Error(`visit create failed: ${response.status} ${response.text}`);
          ids.push(response.body.data.id);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      return ids;
    },
    async close() {
      await stage.close();
      await front.close();
      await receiver.close();
    },
  };
}
