/**
 * The destination policy (SPEC: Webhook subscriptions rule 3), the one place that decides whether the
 * service may send a request to a target URL. Used when a subscription is created, at every patch and
 * before every delivery attempt; the delivery then connects to exactly the addresses checked here.
 *
 * Rules, in order: an absolute URL without white space or control characters; https only; no user
 * credentials; no fragment; port 443 only (an explicit :443 is the same URL); a host name that can be a
 * DNS name; and every address of the host public (address-classification.ts says which are). IP literals
 * are judged after the WHATWG URL parser has normalised them (decimal, octal, hex and short IPv4 forms
 * become dotted quads; IPv6 is compressed), so every notation of one address gets the same verdict.
 * Hosts listed in WEBHOOK_TEST_ALLOWED_DESTINATIONS (tests only) skip the port and address rules, and are
 * resolved by the system (hosts file included); a tenant's names are asked of DNS (resolvers.ts).
 * Messages repeat parts of the URL (scheme, host, address) by the request's rule (request-names.ts: printable and
 * at most 100 characters, else described), and a resolver's reason cut (echo): no answer grows with the input.
 */
import ipaddr from 'ipaddr.js';
import { echo } from '../../http/problem.js';
import { characterNamed, valueOrWhy, whyNotShown } from '../../http/request-names.js';
import { canonicalAddress, classifyAddress } from './address-classification.js';
import { DnsFailure, networkResolver, type Resolver, systemResolver } from './resolvers.js';

export type DestinationRule = 'url' | 'https' | 'userinfo' | 'fragment' | 'port' | 'address' | 'dns';

export type DestinationDecision =
  | {
      kind: 'allowed';
      url: URL;
      /** The host as connected to and verified by TLS (no brackets around IPv6). */
      hostname: string;
      port: number;
      /** The checked addresses, in resolver order; a delivery connects to one of these and nothing else. */
      addresses: string[];
    }
  | { kind: 'violation'; rule: DestinationRule; message: string }
  | { kind: 'unavailable'; message: string };

const DOTTED_QUAD = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * White space (Unicode's White_Space) and control characters: a URI has none (RFC 3986), and the WHATWG
 * parser drops some of them silently (leading and trailing ones, tabs and newlines anywhere), so a target
 * stored as given would not be the URL the deliveries go to.
 */
const WHITE_SPACE_OR_CONTROL = /[\p{White_Space}\p{Cc}]/u;

/** RFC 1035: a name has at most 255 octets on the wire, 253 characters as text; a label 1 to 63. */
const MAX_DNS_NAME = 253;
const MAX_DNS_LABEL = 63;

/**
 * Why `host` (the URL parser's ASCII form) can never be a DNS name, or undefined when it can be. Decided
 * before any lookup: getaddrinfo answers a name over 255 characters with EINVAL, which reads as a temporary
 * failure, and its answer to the others depends on the resolver.
 */
function notADnsName(host: string): string | undefined {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length > MAX_DNS_NAME) return `${name.length} characters, more than the ${MAX_DNS_NAME} a DNS name may have`;
  const labels = name.split('.');
  if (labels.includes('')) return 'an empty label (two dots in a row, or a leading dot)';
  const long = labels.find((label) => label.length > MAX_DNS_LABEL);
  if (long !== undefined)
    return `a label of ${long.length} characters, more than the ${MAX_DNS_LABEL} a DNS label may have`;
  return undefined;
}

export interface DestinationPolicyOptions {
  /** Resolves every name, when given (tests); otherwise a tenant's names go to DNS and the test hosts to the system (resolvers.ts). */
  resolver?: Resolver | undefined;
  /** `host:port` entries (lower case; IPv6 hosts in brackets) that skip the port and address rules. */
  testAllowedDestinations?: readonly string[];
}

export class DestinationPolicy {
  private readonly resolver: Resolver;
  private readonly testResolver: Resolver;
  private readonly testAllowed: ReadonlySet<string>;

  constructor(options: DestinationPolicyOptions = {}) {
    this.resolver = options.resolver ?? networkResolver();
    this.testResolver = options.resolver ?? systemResolver();
    this.testAllowed = new Set((options.testAllowedDestinations ?? []).map((entry) => entry.toLowerCase()));
  }

  async check(targetUrl: string): Promise<DestinationDecision> {
    const violation = (rule: DestinationRule, message: string): DestinationDecision => ({
      kind: 'violation',
      rule,
      message,
    });
    const stray = characterNamed(targetUrl, WHITE_SPACE_OR_CONTROL);
    if (stray !== undefined) return violation('url', `must not contain white space or control characters (${stray})`);
    let url: URL;
    try {
      url = new URL(targetUrl);
    } catch {
      return violation('url', 'must be an absolute https URL');
    }
    if (url.protocol !== 'https:')
      return violation('https', `must use https, not ${valueOrWhy(url.protocol.replace(/:$/, ''), 'a scheme')}`);
    if (url.username !== '' || url.password !== '')
      return violation('userinfo', 'must not contain user credentials (user:password@)');
    // URL.hash is empty for a bare "#" too; the raw text tells.
    if (targetUrl.includes('#')) return violation('fragment', 'must not contain a fragment (#...)');

    const port = url.port === '' ? 443 : Number(url.port);
    const allowedForTests = this.testAllowed.has(`${url.hostname}:${port}`);
    if (port !== 443 && !allowedForTests) return violation('port', `must use port 443; port ${port} is not allowed`);

    const host = url.hostname;
    // The URL parser's ASCII form: printable, but up to 253 characters of a DNS name (more when not one).
    const shownHost = valueOrWhy(host, "the URL's host");
    const literal = host.startsWith('[') ? host.slice(1, -1) : DOTTED_QUAD.test(host) ? host : undefined;
    const hostname = literal ?? host;
    let addresses: string[];
    if (literal !== undefined) {
      addresses = [canonicalAddress(literal)];
    } else {
      // A name that can never resolve is the 'dns' rule's "does not resolve", known without asking.
      const malformed = notADnsName(host);
      // Not repeated, the host is only named: the reason says what is wrong with it (its length, a label's).
      if (malformed !== undefined)
        return violation(
          'dns',
          `${whyNotShown(host) === undefined ? host : "the URL's host"} is not a DNS name: ${malformed}`,
        );
      // RFC 6761: localhost and its subdomains are loopback by definition, whatever a resolver says.
      if (!allowedForTests && /(^|\.)localhost\.?$/.test(host))
        return violation('address', `${shownHost} is a loopback name`);
      try {
        const resolve = allowedForTests ? this.testResolver : this.resolver;
        addresses = (await resolve(host)).map(canonicalAddress);
      } catch (error) {
        if (error instanceof DnsFailure && error.permanent) return violation('dns', `${shownHost} does not resolve`);
        const reason = echo(error instanceof Error ? error.message : String(error));
        return {
          kind: 'unavailable',
          message: `DNS lookup of ${shownHost} failed temporarily (${reason}); retry later`,
        };
      }
      if (addresses.length === 0) return violation('dns', `${shownHost} does not resolve`);
    }

    if (!allowedForTests) {
      for (const address of addresses) {
        const reason = classifyAddress(address);
        if (reason === undefined) continue;
        const message =
          literal !== undefined
            ? `${valueOrWhy(address, 'the address')} is ${reason}`
            : `${shownHost} resolves to ${address}, ${reason}`;
        return violation('address', message);
      }
    }
    // Connect to an IPv4-mapped address as the IPv4 address it is.
    return {
      kind: 'allowed',
      url,
      hostname,
      port,
      addresses: addresses.map((address) => ipaddr.process(address).toString()),
    };
  }
}
