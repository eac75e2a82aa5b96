/**
 * How the destination policy turns a host name into addresses.
 *
 * A tenant's names are asked of DNS directly (c-ares, `dns.Resolver`): queries are datagrams on the event
 * loop, so a name under a tenant's own slow or silent name server costs a pending query until its timeout,
 * and nothing any other lookup or request needs. getaddrinfo (`dns.lookup`) would hold a thread of libuv's
 * pool (4 by default, shared with file I/O, and then with the scrypt of every token request) until the system
 * resolver gave up, whatever our timeout: a few such names stalled every tenant's deliveries and token requests.
 *
 * getaddrinfo (hosts file, then DNS) stays for the operator's own WEBHOOK_TEST_ALLOWED_DESTINATIONS, where
 * `localhost` and names from the hosts file are the point, and no tenant chooses the name.
 */
import dns from 'node:dns';

/** A DNS failure: permanent (the name does not exist) or temporary (retry later); the message is the reason (e.g. ETIMEOUT). */
export class DnsFailure extends Error {
  constructor(
    readonly permanent: boolean,
    message: string,
  ) {
    super(message);
    this.name = 'DnsFailure';
  }
}

/** Resolves a host name to every address it has; throws DnsFailure. Injectable for tests. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** How long a lookup may take before it is a temporary failure. */
export const DNS_TIMEOUT_MS = 5_000;

/**
 * Answers that mean "this name will never resolve" rather than "try again": no such name (NXDOMAIN), no
 * address of the kind asked, or a name the resolver refuses to ask about at all (getaddrinfo's EINVAL for a
 * name over 255 characters or not valid IDNA; c-ares' EBADNAME). SERVFAIL, a refused query, a timeout and
 * the like say something about the resolver, not the name, and stay temporary.
 */
const PERMANENT_DNS_CODES = new Set([
  'ENOTFOUND',
  'ENODATA',
  'EAI_NONAME',
  'EAI_NODATA',
  'NXDOMAIN',
  'EINVAL',
  'EBADNAME',
]);

function dnsFailure(error: unknown): DnsFailure {
  if (error instanceof DnsFailure) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
  return new DnsFailure(PERMANENT_DNS_CODES.has(code), code);
}

/**
 * Lookups of one name that overlap share one answer: a lookup that starts while another of the same name
 * is in flight waits for that one instead of asking again. Nothing is kept once it settles, so every
 * check still sees an answer the resolver gave during that check (SPEC: checked again at each delivery),
 * while a burst of deliveries to one host costs one lookup instead of one each.
 */
export function coalescing(resolver: Resolver): Resolver {
  const inflight = new Map<string, Promise<string[]>>();
  return (hostname) => {
    const pending = inflight.get(hostname);
    if (pending) return pending;
    const lookup = resolver(hostname).finally(() => inflight.delete(hostname));
    inflight.set(hostname, lookup);
    return lookup;
  };
}

/** `lookup`, failing temporarily once `timeoutMs` has passed (the lookup itself may go on). */
function within(timeoutMs: number, lookup: Resolver): Resolver {
  return async (hostname) => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DnsFailure(false, `timed out after ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([lookup(hostname), timedOut]);
    } catch (error) {
      throw dnsFailure(error);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** getaddrinfo (hosts file, then DNS), every address in the order given. */
const getaddrinfo: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((answer) => answer.address);

/** The operating system's resolver, for the operator's test destinations only (see above). */
export function systemResolver(timeoutMs = DNS_TIMEOUT_MS, lookup: Resolver = getaddrinfo): Resolver {
  return coalescing(within(timeoutMs, lookup));
}

export interface NetworkResolverOptions {
  timeoutMs?: number;
  /** Name servers (`address` or `address:port`); the system's (resolv.conf) when unset. */
  servers?: readonly string[];
}

/**
 * A tenant's names, asked of DNS: A and AAAA queries at once, IPv4 addresses first. A name is permanently
 * unresolvable only when both answers say so; when one family answers and the other fails for the moment,
 * the addresses found are the checked ones (a delivery connects to nothing else).
 */
export function networkResolver(options: NetworkResolverOptions = {}): Resolver {
  const timeoutMs = options.timeoutMs ?? DNS_TIMEOUT_MS;
  // c-ares' own timeout ends each query (two tries, the second given twice the first's time) about when
  // ours does, so a silent name server leaves nothing pending for long.
  const resolver = new dns.promises.Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 3)), tries: 2 });
  if (options.servers) resolver.setServers([...options.servers]);
  return coalescing(
    within(timeoutMs, async (hostname) => {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const addresses = [v4, v6].flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
      if (addresses.length > 0) return addresses;
      const failures = [v4, v6].flatMap((answer) => (answer.status === 'rejected' ? [dnsFailure(answer.reason)] : []));
      // Both answered, with no address: the name has none.
      if (failures.length === 0) return [];
      throw failures.find((failure) => !failure.permanent) ?? failures[0]!;
    }),
  );
}
