/**
 * The example receiver as a program: `npx tsx examples/webhook-receiver/server.ts`.
 *
 *   WEBHOOK_SECRET   the subscription's secret (required; used exactly as given)
 *   PORT             default 8080 (plain HTTP: put it behind your TLS-terminating proxy on port 443,
 *                    since the service delivers only to https on port 443)
 *   RECEIVER_DATABASE  postgres://… for PostgreSQL, or a directory for PGlite (default ./receiver-data)
 */
import { createServer } from 'node:http';
import { createReceiverHandler } from './receiver.js';
import { openEventStore } from './store.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write('WEBHOOK_SECRET is required\n');
  process.exit(2);
}
const store = await openEventStore(process.env.RECEIVER_DATABASE ?? './receiver-data');
const handler = createReceiverHandler({ secret, store, log: (line) => process.stdout.write(`${line}\n`) });
const server = createServer((request, response) => {
  handler(request, response).catch(() => response.writeHead(500).end());
});
server.listen(Number(process.env.PORT ?? 8080), () =>
  process.stdout.write(`receiving webhooks on port ${Number(process.env.PORT ?? 8080)}\n`),
);
const stop = () => server.close(() => void store.close().then(() => process.exit(0)));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
