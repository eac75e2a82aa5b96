/**
 * The example receiver as a program: `npx tsx examples/webhook-receiver/server.ts`.
 *
 *   WEBHOOK_SECRET   the subscription's secret (required; used exactly as given)
 *   PORT             default 8080 (plain HTTP: put it behind your TLS-terminating proxy on port 443,
 *                    since the service delivers only to https on port 443)
 *   HOST             the address to listen on, default 127.0.0.1: this machine only (a developer's laptop,
 *                    or a proxy on the same machine); 0.0.0.0 for every interface (a proxy elsewhere)
 *   RECEIVER_DATABASE  postgres://… for PostgreSQL, or a directory for PGlite (default ./receiver-data)
 */
import { createServer } from 'node:http';
import { createReceiverHandler } from './receiver.js';
import { openEventStore } from './store.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write(
    'WEBHOOK_SECRET is required: the secret of your webhook subscription, or in the sandbox the one `svc listen` ' +
      'prints on its Ready line ("Signing secret: whsec_…")\n',
  );
  process.exit(2);
}
const port = Number(process.env.PORT || 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`PORT must be an integer from 0 to 65535, got "${process.env.PORT}"\n`);
  process.exit(2);
}
const store = await openEventStore(process.env.RECEIVER_DATABASE ?? './receiver-data');
const handler = createReceiverHandler({ secret, store, log: (line) => process.stdout.write(`${line}\n`) });
const server = createServer((request, response) => {
  handler(request, response).catch(() => response.writeHead(500).end());
});
// Unsigned requests get no further than a 401, but a receiver on a laptop has no business answering the
// café's network: it listens on the loopback unless HOST says otherwise.
const host = process.env.HOST || '127.0.0.1';
server.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE')
    process.stderr.write(
      `port ${port} is in use by another process (this receiver already running?): stop it, or start this one ` +
        'with PORT set to a free port (and forward to that port)\n',
    );
  else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    process.stderr.write(
      `HOST ${host} is not an address of this machine: set HOST to one of its addresses, 127.0.0.1 (this ` +
        'machine only, the default) or 0.0.0.0 (every interface)\n',
    );
  else throw error;
  void store.close().then(() => process.exit(1));
});
server.listen(port, host, () => process.stdout.write(`receiving webhooks on port ${port} of ${host}\n`));
const stop = () => server.close(() => void store.close().then(() => process.exit(0)));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
