/**
 * Which IP addresses are public webhook destinations (SPEC: Webhook subscriptions rule 3, "every DNS address
 * of the host must be public"): the special-purpose ranges of IPv4 and IPv6 with what each is, and the IPv6
 * forms that embed an IPv4 address, judged by the address they embed. The destination policy asks it about
 * every IP literal and every DNS answer.
 */
import ipaddr from 'ipaddr.js';

type Range = readonly [cidr: string, description: string];

/**
 * IPv4 addresses that are not public: the IANA IPv4 Special-Purpose Address Registry, multicast,
 * and the cloud metadata services (more specific entries first; the first match names the address).
 */
const IPV4_RANGES: readonly Range[] = [
  ['169.254.169.254/32', 'a cloud metadata address'],
  ['169.254.170.2/32', 'a cloud metadata address'],
  ['169.254.170.23/32', 'a cloud metadata address'],
  ['100.100.100.200/32', 'a cloud metadata address'],
  ['192.0.0.192/32', 'a cloud metadata address'],
  ['0.0.0.0/32', 'an unspecified address'],
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol assignment address'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.31.196.0/24', 'an AS112 address'],
  ['192.52.193.0/24', 'an AMT address'],
  ['192.88.99.0/24', 'a 6to4 relay anycast address'],
  ['192.168.0.0/16', 'a private address'],
  ['192.175.48.0/24', 'an AS112 address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'a broadcast address'],
  ['240.0.0.0/4', 'a reserved address'],
];

/** IPv6 addresses that are not public (after the embedded-IPv4 forms below have been judged). */
const IPV6_RANGES: readonly Range[] = [
  ['fd00:ec2::254/128', 'a cloud metadata address'],
  ['::/128', 'an unspecified address'],
  ['::1/128', 'a loopback address'],
  ['::ffff:0:0:0/96', 'an IPv4-translated address'],
  ['::/96', 'an IPv4-compatible address (deprecated)'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['100:0:0:1::/64', 'a dummy address'],
  ['2001::/32', 'a Teredo address'],
  ['2001:2::/48', 'a benchmarking address'],
  ['2001:db8::/32', 'a documentation address'],
  ['2001::/23', 'an IETF protocol assignment address'],
  ['2620:4f:8000::/48', 'an AS112 address'],
  ['3fff::/20', 'a documentation address'],
  ['5f00::/16', 'a segment routing (SRv6) address'],
  ['fc00::/7', 'a private (unique local) address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address (deprecated)'],
  ['ff00::/8', 'a multicast address'],
];

const compile = (ranges: readonly Range[]) =>
  ranges.map(([cidr, description]) => ({ range: ipaddr.parseCIDR(cidr), description }));
const IPV4_TABLE = compile(IPV4_RANGES);
const IPV6_TABLE = compile(IPV6_RANGES);
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function classifyIPv4(address: ipaddr.IPv4): string | undefined {
  return IPV4_TABLE.find((entry) => address.match(entry.range as [ipaddr.IPv4, number]))?.description;
}

/** An IPv6 text that ends in a dotted quad ("::1.2.3.4", "64:ff9b::1.2.3.4"): its head and four octets. */
const TRAILING_QUAD = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * The address an IP text names (its zone left out), or undefined when it names none. An IPv6 text's
 * trailing dotted quad is read as the two groups it stands for before ipaddr.js parses it: ipaddr.js takes
 * "::1.2.3.4" (IPv4-compatible, ::/96, as Node's resolver writes ::102:304) for the IPv4-mapped
 * "::ffff:1.2.3.4", which would be judged, and connected to, as the IPv4 address 1.2.3.4.
 */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let unzoned = text.replace(/%.*$/, '');
  const quad = TRAILING_QUAD.exec(unzoned);
  if (quad) {
    const octets = quad.slice(2).map(Number);
    if (octets.some((octet) => octet > 255)) return undefined;
    const group = (high: number, low: number) => ((high << 8) | low).toString(16);
    unzoned = `${quad[1]}${group(octets[0]!, octets[1]!)}:${group(octets[2]!, octets[3]!)}`;
  }
  return ipaddr.isValid(unzoned) ? ipaddr.parse(unzoned) : undefined;
}

/**
 * Why an address is not a public destination (e.g. "a private address"), or undefined when it is public.
 * IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4) are judged by the
 * embedded address; an address that cannot be parsed is never public.
 */
export function classifyAddress(text: string): string | undefined {
  const parsed = parseAddress(text);
  if (parsed === undefined) return 'not a valid IP address';
  if (parsed.kind() === 'ipv4') {
    // ipaddr.parse accepts legacy forms ("127.1", "0x7f.1"); judge the canonical dotted quad.
    return classifyIPv4(parsed as ipaddr.IPv4);
  }
  const v6 = parsed as ipaddr.IPv6;
  const embedded = (form: string, v4: ipaddr.IPv4) => {
    const verdict = classifyIPv4(v4);
    return verdict === undefined ? undefined : `${form} of ${v4.toString()}, ${verdict}`;
  };
  if (v6.isIPv4MappedAddress()) return embedded('an IPv4-mapped form', v6.toIPv4Address());
  const parts = v6.parts;
  if (v6.match(NAT64 as [ipaddr.IPv6, number])) return embedded('a NAT64 form', ipv4FromParts(parts[6]!, parts[7]!));
  if (v6.match(SIX_TO_FOUR as [ipaddr.IPv6, number]))
    return embedded('a 6to4 form', ipv4FromParts(parts[1]!, parts[2]!));
  const special = IPV6_TABLE.find((entry) => v6.match(entry.range as [ipaddr.IPv6, number]))?.description;
  if (special !== undefined) return special;
  if (!v6.match(GLOBAL_UNICAST as [ipaddr.IPv6, number])) return 'a reserved address (outside global unicast 2000::/3)';
  return undefined;
}

/** The canonical text of an IP address (IPv4 dotted quad; IPv6 compressed, lower case, no zone). */
export function canonicalAddress(text: string): string {
  return parseAddress(text)?.toString() ?? text;
}
