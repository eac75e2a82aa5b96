/**
 * Sends one delivery attempt over HTTPS to an address the destination policy has checked. No DNS lookup
 * happens here: each connection pool is pinned to one checked address (so there is no window between
 * check and connect for DNS rebinding), while TLS is verified against the URL's host name (SNI and the
 * certificate check). Redirects are never followed (undici's request does not follow them), and the
 * receiver's body is read only up to a small limit and discarded.
 */
import net from 'node:net';
import tls from 'node:tls';
import { buildConnector, Pool } from 'undici';

export interface TransportRequest {
  url: URL;
  /** The URL's host without IPv6 brackets; TLS verifies the certificate against it. */
  hostname: string;
  /** Checked addresses, tried in order while a connection cannot be opened. */
  addresses: readonly string[];
  headers: Record<string, string>;
  body: Buffer;
  signal: AbortSignal;
}

export interface WebhookTransport {
  /** Resolves with the response status; rejects on any network, TLS or timeout failure. */
  send(request: TransportRequest): Promise<{ statusCode: number }>;
  close(): Promise<void>;
}

export interface PinnedTransportOptions {
  /** CA certificates (PEM) trusted in addition to Node's bundled roots; production leaves this unset and uses NODE_EXTRA_CA_CERTS. */
  extraCa?: readonly string[];
  connectTimeoutMs: number;
  /** Connections per destination address. */
  connections: number;
  /** Pools kept at most (one per origin and address); past it the least recently used is closed. */
  maxPools?: number;
}

/** Errors raised before a connection exists: nothing was sent, so the next checked address may be tried. */
const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'EAFNOSUPPORT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const POOL_IDLE_MS = 120_000;
/**
 * A tenant's host name may resolve to a new address at every lookup (any of a /64's, say): each would keep a pool
 * and its open connections for POOL_IDLE_MS, without bound. Past this many the least recently used is closed (its
 * requests under way end first).
 */
const MAX_POOLS = 256;
const RESPONSE_BODY_LIMIT = 64 * 1024;

export class PinnedTransport implements WebhookTransport {
  private readonly pools = new Map<string, { pool: Pool; lastUsed: number }>();
  private lastSweep = Date.now();
  private readonly connector: buildConnector.connector;

  constructor(private readonly options: PinnedTransportOptions) {
    // Extra CAs as one secure context made here: given as `ca`, every connection would parse Node's root
    // certificates and build a context of its own.
    const secureContext = options.extraCa?.length
      ? tls.createSecureContext({ ca: [...tls.rootCertificates, ...options.extraCa] })
      : undefined;
    this.connector = buildConnector({
      timeout: options.connectTimeoutMs,
      ...(secureContext ? { secureContext } : {}),
    });
  }

  private poolFor(origin: string, hostname: string, address: string): Pool {
    const now = Date.now();
    if (now - this.lastSweep > POOL_IDLE_MS / 2) this.sweep(now);
    const key = `${origin}|${address}`;
    let entry = this.pools.get(key);
    // The map in the order of last use: the first entry is the least recently used.
    if (entry) this.pools.delete(key);
    else {
      this.evictBeyond((this.options.maxPools ?? MAX_POOLS) - 1);
      const servername = net.isIP(hostname) ? undefined : hostname;
      const pool = new Pool(origin, {
        connections: this.options.connections,
        // Connect to the checked address, never to whatever the host name resolves to now.
        connect: (connectOptions, callback) =>
          this.connector({ ...connectOptions, hostname: address, ...(servername ? { servername } : {}) }, callback),
      });
      entry = { pool, lastUsed: now };
    }
    entry.lastUsed = now;
    this.pools.set(key, entry);
    return entry.pool;
  }

  /** Closes the least recently used pools until at most `kept` remain. */
  private evictBeyond(kept: number): void {
    for (const [key, entry] of this.pools) {
      if (this.pools.size <= kept) return;
      this.pools.delete(key);
      void entry.pool.close().catch(() => undefined);
    }
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, entry] of this.pools) {
      if (now - entry.lastUsed > POOL_IDLE_MS) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => undefined);
      }
    }
  }

  async send(request: TransportRequest): Promise<{ statusCode: number }> {
    const { url } = request;
    if (request.addresses.length === 0) throw new Error(`no checked address for ${request.hostname}`);
    let lastError: unknown;
    for (const [index, address] of request.addresses.entries()) {
      const pool = this.poolFor(url.origin, request.hostname, address);
      try {
        const response = await pool.request({
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: request.headers,
          body: request.body,
          signal: request.signal,
        });
        await response.body.dump({ limit: RESPONSE_BODY_LIMIT }).catch(() => undefined);
        return { statusCode: response.statusCode };
      } catch (error) {
        lastError = error;
        const code = (error as { code?: string }).code;
        const more = index < request.addresses.length - 1;
        if (!(more && code !== undefined && CONNECT_ERRORS.has(code) && !request.signal.aborted)) throw error;
      }
    }
    throw lastError;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((entry) => entry.pool.destroy().catch(() => undefined)));
  }
}

/** A short, log-safe description of a transport failure (no receiver content). */
export function describeTransportError(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? String(error);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}
