/**
 * Hostile webhook destinations, shared by the destination-policy test (tests/webhooks) and the SSRF
 * reliability suite: a table of named bad target URLs, each with what the 422 must say about it, the DNS
 * answers its names resolve to (an injected resolver), and the test-only allow list it assumes.
 */
import { DnsFailure, type Resolver } from '../../src/modules/outbox/resolvers.js';

export type DnsAnswer = string[] | 'nxdomain' | 'servfail' | 'timeout';

export const DNS: Record<string, DnsAnswer> = {
  localhost: ['127.0.0.1', '::1'],
  'public.example': ['93.184.216.34'],
  'public6.example': ['2606:2800:220:1:248:1893:25c8:1946'],
  'dual.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'private.example': ['10.0.0.5'],
  'loopback.example': ['127.0.0.1'],
  'loopback6.example': ['::1'],
  'metadata.example': ['169.254.169.254'],
  'cgnat.example': ['100.64.12.34'],
  'linklocal6.example': ['fe80::1'],
  'ula.example': ['fd12:3456::1'],
  'mapped.example': ['::ffff:10.1.2.3'],
  'nat64.example': ['64:ff9b::7f00:1'],
  'sixtofour.example': ['2002:c0a8:101::1'],
  'mixed.example': ['93.184.216.34', '192.168.1.10'],
  'mixed6.example': ['2606:2800:220:1:248:1893:25c8:1946', 'fd00::1'],
  'docs.example': ['198.51.100.7'],
  'empty.example': [],
  'nxdomain.example': 'nxdomain',
  'servfail.example': 'servfail',
  'timeout.example': 'timeout',
};

/** The test-only allow list the table assumes (the `allow-listed …` rows). */
export const HOSTILE_DNS_ALLOWED = ['localhost:8443', 'public.example:8443', '[::1]:9443'];

/** A resolver answering from DNS, with `overrides` consulted first (e.g. answers that change between lookups). */
export function tableResolver(overrides: (hostname: string) => DnsAnswer | undefined = () => undefined): Resolver {
  return async (hostname) => {
    const answer = overrides(hostname) ?? DNS[hostname];
    if (answer === undefined || answer === 'nxdomain') throw new DnsFailure(true, `${hostname} does not exist`);
    if (answer === 'servfail') throw new DnsFailure(false, 'SERVFAIL');
    if (answer === 'timeout') throw new DnsFailure(false, 'timed out');
    return answer;
  };
}

/** [name, targetUrl, what errors.targetUrl must say]; every one must be refused with 422. */
export const REFUSED: Array<[string, string, RegExp]> = [
  ['plain http', 'http://public.example/hook', /must use https/],
  ['ftp scheme', 'ftp://public.example/hook', /must use https/],
  ['wss scheme', 'wss://public.example/hook', /must use https/],
  ['relative reference', '/hooks/1', /absolute/],
  ['no scheme', 'public.example/hook', /absolute/],
  // The URL parser drops these silently: the stored text would not be the URL delivered to.
  ['a leading space', ' https://public.example/hook', /white space or control characters \(U\+0020 at character 1\)/],
  ['a trailing tab', 'https://public.example/hook\t', /white space or control characters \(U\+0009/],
  ['a line feed in the host', 'https://public.exam\nple/hook', /white space or control characters \(U\+000A/],
  ['user and password', 'https://user:pass@public.example/hook', /user credentials/],
  ['user only', 'https://user@public.example/hook', /user credentials/],
  ['credentials hiding a second host', 'https://127.0.0.1%2f@public.example/', /user credentials/],
  ['fragment', 'https://public.example/hook#section', /fragment/],
  ['empty fragment', 'https://public.example/hook#', /fragment/],
  ['malformed port', 'https://public.example:8443x/hook', /absolute/],
  ['port 8080', 'https://public.example:8080/hook', /port 443.*8080/],
  ['port 80', 'https://public.example:80/hook', /port 443.*80/],
  ['port 444', 'https://public.example:444/', /port 443.*444/],
  ['loopback literal', 'https://127.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['loopback range end', 'https://127.255.255.254/', /loopback/],
  ['loopback in decimal', 'https://2130706433/', /127\.0\.0\.1 is a loopback address/],
  ['loopback in hex', 'https://0x7f000001/', /127\.0\.0\.1 is a loopback address/],
  ['loopback in octal', 'https://0177.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['loopback short form', 'https://127.1/', /127\.0\.0\.1 is a loopback address/],
  ['loopback percent-encoded', 'https://%31%32%37.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['loopback in full-width digits', 'https://１２７.０.０.１/', /127\.0\.0\.1 is a loopback address/],
  ['loopback with a trailing dot', 'https://127.0.0.1./', /loopback/],
  ['loopback with explicit :443', 'https://127.0.0.1:443/', /loopback/],
  ['localhost', 'https://localhost/', /loopback/],
  ['a localhost subdomain', 'https://api.localhost/', /loopback/],
  ['LOCALHOST with a trailing dot', 'https://LOCALHOST./', /loopback/],
  ['unspecified 0.0.0.0', 'https://0.0.0.0/', /0\.0\.0\.0 is an unspecified address/],
  ['unspecified as "0"', 'https://0/', /unspecified/],
  ['"this network"', 'https://0.1.2.3/', /this network/],
  ['private 10/8', 'https://10.0.0.1/', /10\.0\.0\.1 is a private address/],
  ['private 172.16/12', 'https://172.16.5.4/', /private/],
  ['private 192.168/16', 'https://192.168.0.1/', /private/],
  ['private in hex octets', 'https://0xc0.0xa8.0.1/', /192\.168\.0\.1 is a private address/],
  ['cloud metadata', 'https://169.254.169.254/latest/meta-data/', /cloud metadata/],
  ['ECS task metadata', 'https://169.254.170.2/v2/credentials', /cloud metadata/],
  ['Alibaba metadata', 'https://100.100.100.200/', /cloud metadata/],
  ['link-local', 'https://169.254.1.1/', /link-local/],
  ['carrier-grade NAT', 'https://100.64.0.1/', /carrier-grade NAT/],
  ['multicast', 'https://224.0.0.1/', /multicast/],
  ['broadcast', 'https://255.255.255.255/', /broadcast/],
  ['reserved 240/4', 'https://240.0.0.1/', /reserved/],
  ['documentation TEST-NET-1', 'https://192.0.2.1/', /documentation/],
  ['documentation TEST-NET-2', 'https://198.51.100.7/', /documentation/],
  ['documentation TEST-NET-3', 'https://203.0.113.9/', /documentation/],
  ['benchmarking', 'https://198.18.0.1/', /benchmarking/],
  ['IETF protocol assignments', 'https://192.0.0.8/', /IETF/],
  ['6to4 relay anycast', 'https://192.88.99.1/', /6to4 relay/],
  ['IPv6 loopback', 'https://[::1]/', /::1 is a loopback address/],
  ['IPv6 unspecified', 'https://[::]/', /unspecified/],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/', /IPv4-mapped form of 127\.0\.0\.1, a loopback address/],
  [
    'IPv4-mapped metadata',
    'https://[::ffff:169.254.169.254]/',
    /IPv4-mapped form of 169\.254\.169\.254, a cloud metadata address/,
  ],
  ['IPv4-mapped private in hex', 'https://[::ffff:a00:1]/', /IPv4-mapped form of 10\.0\.0\.1/],
  ['IPv4-compatible loopback', 'https://[::127.0.0.1]/', /IPv4-compatible/],
  ['IPv4-translated', 'https://[::ffff:0:a00:1]/', /IPv4-translated/],
  ['NAT64 of a private address', 'https://[64:ff9b::10.0.0.1]/', /NAT64 form of 10\.0\.0\.1, a private address/],
  ['local-use NAT64', 'https://[64:ff9b:1::1]/', /local-use NAT64/],
  ['6to4 of loopback', 'https://[2002:7f00:1::1]/', /6to4 form of 127\.0\.0\.1/],
  ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo/],
  ['IPv6 link-local', 'https://[fe80::1]/', /link-local/],
  ['IPv6 zone id', 'https://[fe80::1%25eth0]/', /absolute/],
  ['IPv6 unique local', 'https://[fd00::1]/', /unique local/],
  ['AWS IPv6 metadata', 'https://[fd00:ec2::254]/', /cloud metadata/],
  ['IPv6 multicast', 'https://[ff02::1]/', /multicast/],
  ['IPv6 documentation', 'https://[2001:db8::1]/', /documentation/],
  ['IPv6 site-local', 'https://[fec0::1]/', /site-local/],
  ['IPv6 discard-only', 'https://[100::1]/', /discard/],
  ['IPv6 outside global unicast', 'https://[4000::1]/', /reserved/],
  [
    'name resolving to a private address',
    'https://private.example/hook',
    /private\.example resolves to 10\.0\.0\.5, a private address/,
  ],
  ['name resolving to loopback', 'https://loopback.example/', /resolves to 127\.0\.0\.1, a loopback address/],
  ['name resolving to IPv6 loopback', 'https://loopback6.example/', /resolves to ::1, a loopback address/],
  [
    'name resolving to cloud metadata',
    'https://metadata.example/',
    /resolves to 169\.254\.169\.254, a cloud metadata address/,
  ],
  ['name resolving to CGNAT', 'https://cgnat.example/', /carrier-grade NAT/],
  ['name resolving to IPv6 link-local', 'https://linklocal6.example/', /link-local/],
  ['name resolving to unique local', 'https://ula.example/', /unique local/],
  ['name resolving to IPv4-mapped private', 'https://mapped.example/', /IPv4-mapped form of 10\.1\.2\.3/],
  ['name resolving to NAT64 loopback', 'https://nat64.example/', /NAT64 form of 127\.0\.0\.1/],
  ['name resolving to 6to4 private', 'https://sixtofour.example/', /6to4 form of 192\.168\.1\.1/],
  ['mixed public and private answers', 'https://mixed.example/', /resolves to 192\.168\.1\.10, a private address/],
  ['mixed public and unique-local IPv6 answers', 'https://mixed6.example/', /resolves to fd00::1/],
  ['name resolving to documentation space', 'https://docs.example/', /documentation/],
  ['name that does not exist', 'https://nxdomain.example/', /does not resolve/],
  ['name without addresses', 'https://empty.example/', /does not resolve/],
  ['name over 253 characters', `https://${'a.'.repeat(130)}com/`, /is not a DNS name: 263 characters/],
  ['label over 63 characters', `https://${'a'.repeat(64)}.example/`, /is not a DNS name: a label of 64 characters/],
  ['allow-listed host on another port', 'https://localhost:9999/', /port 443/],
  ['allow-listed host and port over http', 'http://localhost:8443/', /must use https/],
  ['allow-listed host and port with credentials', 'https://u:p@localhost:8443/', /user credentials/],
  ['allow-listed host and port with a fragment', 'https://localhost:8443/#x', /fragment/],
];
