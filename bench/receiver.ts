/**
 * The webhook receiver of the bench, a process of its own: HTTPS on 127.0.0.1 with a certificate for
 * `localhost` signed by a CA made for the run, answering 200 at once. It records, per delivery, when its
 * answer was written and the event's occurredAt, so the bench can tell end-to-end latency, throughput
 * and whether any event arrived twice.
 */
import { writeFileSync } from 'node:fs';
import https from 'node:https';
import { createTestCertificates } from '../tests/helpers/certificates.js';
import { serveRequests } from './lib/processes.js';

interface Arrival {
  eventId: string;
  deliveryId: string;
  attempt: string;
  answeredAt: number;
  occurredAt: number;
  resourceId: string | undefined;
}

let allArrivals: Arrival[] = [];

const certificates = await createTestCertificates(['localhost']);
const caFile = process.argv[2];
if (!caFile) throw new Error('usage: receiver.ts <file to write the CA certificate to>');
writeFileSync(caFile, certificates.caPem);

const server = https.createServer(
  { key: certificates.keyPem, cert: certificates.certPem, keepAliveTimeout: 60_000 },
  (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      const answeredAt = Date.now();
      const header = (name: string) => String(request.headers[name] ?? '');
      let occurredAt = NaN;
      let resourceId: string | undefined;
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          occurredAt?: string;
          resourceId?: string;
        };
        occurredAt = Date.parse(event.occurredAt ?? '');
        resourceId = event.resourceId;
      } catch {
        // not an event (the receiver baseline sends filler): no latency to record
      }
      allArrivals.push({
        eventId: header('x-svc-event-id'),
        deliveryId: header('x-svc-delivery-id'),
        attempt: header('x-svc-attempt'),
        answeredAt,
        occurredAt,
        resourceId,
      });
    });
  },
);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
if (!address || typeof address === 'string') throw new Error('no port');

export interface ReceiverStats {
  count: number;
  distinctDeliveries: number;
  firstAt: number | undefined;
  lastAt: number | undefined;
  /** answeredAt − occurredAt per arrival that carried an event, in ms. */
  latenciesMs: number[];
  /** When each event's resource was first answered (epoch ms), by resource id. */
  answeredAtByResource: Record<string, number>;
}

serveRequests(async (message) => {
  switch (message.type) {
    case 'port':
      return (address as { port: number }).port;
    case 'reset':
      allArrivals = [];
      return null;
    case 'count':
      return allArrivals.length;
    case 'stats': {
      // Only the events whose id starts with the prefix, when one is given (a backlog of the bench's own).
      const prefix = typeof message.eventPrefix === 'string' ? message.eventPrefix : '';
      const arrivals = allArrivals.filter((arrival) => arrival.eventId.startsWith(prefix));
      const deliveries = new Set(arrivals.filter((arrival) => arrival.deliveryId).map((arrival) => arrival.deliveryId));
      const stats: ReceiverStats = {
        count: arrivals.length,
        distinctDeliveries: deliveries.size,
        firstAt: arrivals[0]?.answeredAt,
        lastAt: arrivals.at(-1)?.answeredAt,
        latenciesMs: arrivals
          .filter((arrival) => Number.isFinite(arrival.occurredAt))
          .map((arrival) => arrival.answeredAt - arrival.occurredAt),
        answeredAtByResource: {},
      };
      for (const arrival of arrivals)
        if (arrival.resourceId) stats.answeredAtByResource[arrival.resourceId] ??= arrival.answeredAt;
      return stats;
    }
    default:
      throw new Error(`unknown request ${message.type}`);
  }
});
