/**
 * At most CONNECTIONS_PER_ADDRESS open connections from one client address (an IPv6 address: its /64,
 * `addressBudget`). The rate limit counts requests, and a connection that sends none is closed only when its
 * request's time runs out (REQUEST_TIMEOUT_MS bounds the headers' arrival as well, at most 60 s): one address
 * opening a few hundred silent connections a second, without credentials, held every file descriptor the
 * process may open, and with them every other client's connections (hostile-tenant probe). Past the cap a new
 * connection is closed at once, before anything is read from it.
 *
 * Connections from a trusted proxy (TRUST_PROXY) are not capped: there every client shares the proxy's
 * address, and the proxy is what bounds them.
 */
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { TrustProxy } from '../config.js';
import { addressBudget } from './address-budget.js';

/** Whether a peer is a trusted proxy, whose connections carry many clients. */
function trustedPeer(trustProxy: TrustProxy): (address: string) => boolean {
  if (trustProxy === false) return () => false;
  // Every peer, or the last hops of a count, is a proxy: the peer's address says nothing of the client.
  if (trustProxy === true || typeof trustProxy === 'number') return () => true;
  const trust = proxyAddr.compile([...trustProxy]);
  return (address) => trust(address, 0);
}

/** Refusals are logged at most this often (a flood would otherwise write a line per connection). */
const LOG_INTERVAL_MS = 10_000;

export function registerConnectionCap(
  app: FastifyInstance,
  options: { max: number; trustProxy: TrustProxy; logger: Logger },
): void {
  const open = new Map<string, number>();
  const trusted = trustedPeer(options.trustProxy);
  let refused = 0;
  let loggedAt = 0;
  app.server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address)) return;
    const budget = addressBudget(address);
    const count = (open.get(budget) ?? 0) + 1;
    if (count > options.max) {
      socket.destroy();
      refused++;
      // Real time on purpose: only how often a line is written, no decision of the service.
      const now = performance.now();
      if (now - loggedAt >= LOG_INTERVAL_MS) {
        options.logger.warn(
          { address: budget, refused, max: options.max },
          'connections past the per-address cap closed',
        );
        loggedAt = now;
        refused = 0;
      }
      return;
    }
    open.set(budget, count);
    socket.once('close', () => {
      const left = (open.get(budget) ?? 1) - 1;
      if (left === 0) open.delete(budget);
      else open.set(budget, left);
    });
  });
}
