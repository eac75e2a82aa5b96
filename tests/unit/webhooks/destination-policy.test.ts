/**
 * The destination policy without a network (SPEC: Webhook subscriptions rule 3): which addresses are public,
 * whatever their notation, and each rule of a target URL in order, with DNS answers from a table.
 */
import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../../src/modules/outbox/address-classification.js';
import { DestinationPolicy } from '../../../src/modules/outbox/destination-policy.js';
import { DnsFailure, type Resolver, systemResolver } from '../../../src/modules/outbox/resolvers.js';

describe('address classification', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.0.1', 'a private address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['0.0.0.0', 'an unspecified address'],
    ['192.0.2.10', 'a documentation address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fd00::1', 'a private (unique local) address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['2001:db8::1', 'a documentation address'],
    ['ff02::1', 'a multicast address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['::ffff:10.0.0.1', 'an IPv4-mapped form of 10.0.0.1, a private address'],
    // IPv4-compatible, as Node's resolver writes ::808:808: not the IPv4-mapped ::ffff:8.8.8.8.
    ['::8.8.8.8', 'an IPv4-compatible address (deprecated)'],
    ['::808:808', 'an IPv4-compatible address (deprecated)'],
    ['::1.2.3.256', 'not a valid IP address'],
    ['64:ff9b::7f00:1', 'a NAT64 form of 127.0.0.1, a loopback address'],
    ['2002:a9fe:a9fe::', 'a 6to4 form of 169.254.169.254, a cloud metadata address'],
    ['4000::1', 'a reserved address (outside global unicast 2000::/3)'],
    ['not-an-address', 'not a valid IP address'],
  ])('%s is %s', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34', '64:ff9b::808:808'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(address)).toBeUndefined();
    },
  );

  it('judges every notation of one address alike (after the URL parser normalised it)', () => {
    for (const notation of ['0x7f.1', '2130706433', '0177.0.0.1', '127.1']) {
      expect(classifyAddress(new URL(`https://${notation}/`).hostname)).toBe('a loopback address');
    }
  });
});

const table: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34', '2606:4700:4700::1111'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'empty.example.com': [],
  'compatible.example.com': ['::8.8.8.8'],
  'mapped.example.com': ['::ffff:8.8.8.8'],
  // Allowed for tests on its port only (WEBHOOK_TEST_ALLOWED_DESTINATIONS); refused as loopback elsewhere.
  localhost: ['127.0.0.1'],
};
const resolver: Resolver = async (hostname) => {
  if (hostname === 'flaky.example.com') throw new DnsFailure(false, 'EAI_AGAIN');
  const found = table[hostname];
  if (!found) throw new DnsFailure(true, 'ENOTFOUND');
  return found;
};
const policy = new DestinationPolicy({ resolver, testAllowedDestinations: ['LocalHost:8443'] });
const ruleOf = async (url: string) => {
  const decision = await policy.check(url);
  return decision.kind === 'violation' ? decision.rule : decision.kind;
};

describe('destination policy', () => {
  it.each([
    ['not a url', 'url'],
    ['http://hooks.example.com/x', 'https'],
    ['https://user:pw@hooks.example.com/x', 'userinfo'],
    ['https://hooks.example.com/x#', 'fragment'],
    ['https://hooks.example.com:8443/x', 'port'],
    ['https://127.0.0.1/x', 'address'],
    ['https://[::1]/x', 'address'],
    ['https://localhost/x', 'address'],
    ['https://api.localhost/x', 'address'],
    ['https://mixed.example.com/x', 'address'],
    ['https://compatible.example.com/x', 'address'],
    ['https://unknown.example.com/x', 'dns'],
    ['https://empty.example.com/x', 'dns'],
    ['https://flaky.example.com/x', 'unavailable'],
    ['https://hooks.example.com:443/x', 'allowed'],
    ['https://localhost:8443/x', 'allowed'],
  ])('%s: %s', async (url, rule) => {
    expect(await ruleOf(url)).toBe(rule);
  });

  it('allows a public host with every address it resolves to, for the connection to use', async () => {
    expect(await policy.check('https://hooks.example.com/x')).toMatchObject({
      kind: 'allowed',
      hostname: 'hooks.example.com',
      port: 443,
      addresses: ['93.184.216.34', '2606:4700:4700::1111'],
    });
  });

  it('connects to an IPv4-mapped answer as the IPv4 address it is', async () => {
    expect(await policy.check('https://mapped.example.com/x')).toMatchObject({
      kind: 'allowed',
      addresses: ['8.8.8.8'],
    });
  });

  it('names the address that made a name refused', async () => {
    expect(await policy.check('https://mixed.example.com/x')).toMatchObject({
      message: 'mixed.example.com resolves to 10.0.0.5, a private address',
    });
  });
});

describe('white space and control characters (a URI has none; the URL parser would drop some silently)', () => {
  it.each([
    ['a leading space', ' https://hooks.example.com/x', 'U+0020 at character 1'],
    ['a trailing tab', 'https://hooks.example.com/x\t', 'U+0009 at character 28'],
    ['a newline in the host', 'https://hooks.exa\nmple.com/x', 'U+000A at character 18'],
    ['a carriage return and line feed at the end', 'https://hooks.example.com/x\r\n', 'U+000D at character 28'],
    ['a no-break space in the path', 'https://hooks.example.com/a\u00a0b', 'U+00A0 at character 28'],
    ['an ideographic space in the query', 'https://hooks.example.com/x?a=\u3000', 'U+3000 at character 31'],
    ['a NUL', 'https://hooks.example.com/\u0000', 'U+0000 at character 27'],
    ['a DEL', 'https://hooks.example.com/\u007f', 'U+007F at character 27'],
    ['a C1 control', 'https://hooks.example.com/\u0085', 'U+0085 at character 27'],
    ['a space after an astral character (counted as one)', 'https://hooks.example.com/🔑 x', 'U+0020 at character 28'],
  ])('refuses %s under the url rule, naming the character and where it is', async (_name, url, where) => {
    expect(await policy.check(url)).toEqual({
      kind: 'violation',
      rule: 'url',
      message: `must not contain white space or control characters (${where})`,
    });
  });

  it('still allows a path of other non-ASCII characters (the parser percent-encodes them)', async () => {
    expect(await ruleOf('https://hooks.example.com/café')).toBe('allowed');
  });
});

describe('host names that cannot be DNS names (RFC 1035): refused before any lookup', () => {
  const asked: string[] = [];
  /** Answers every name: whatever a resolver would say, the name itself decides. */
  const answering = new DestinationPolicy({
    resolver: async (hostname) => {
      asked.push(hostname);
      return ['93.184.216.34'];
    },
  });
  const label = (length: number) => 'a'.repeat(length);
  const longest = [label(63), label(63), label(63), label(61)].join('.');

  it.each([
    ['a name over 253 characters', `${'a.'.repeat(130)}com`, /is not a DNS name: 263 characters, more than the 253/],
    ['254 characters', `${longest}a`, /254 characters, more than the 253/],
    ['a label over 63 characters', `${label(64)}.example.com`, /a label of 64 characters, more than the 63/],
    ['an internationalised label over 63 characters as ASCII', `${'aé'.repeat(30)}.example`, /a label of 67/],
    ['an empty label', 'hooks..example.com', /an empty label/],
    ['a leading dot', '.example.com', /an empty label/],
  ])('refuses %s under the dns rule', async (_name, host, message) => {
    asked.length = 0;
    const decision = await answering.check(`https://${host}/x`);
    expect(decision).toMatchObject({ kind: 'violation', rule: 'dns', message: expect.stringMatching(message) });
    expect(asked).toEqual([]);
  });

  it.each([
    ['253 characters', longest],
    ['253 characters and the root dot', `${longest}.`],
    ['a label of 63 characters', `${label(63)}.example.com`],
  ])('allows %s', async (_name, host) => {
    expect(await answering.check(`https://${host}/x`)).toMatchObject({ kind: 'allowed', hostname: host });
  });

  it("repeats the URL's parts by the request's rule: at most 100 characters, else described (no answer grows with the input)", async () => {
    const long = `${'a.'.repeat(130)}com`;
    const refused = await answering.check(`https://${long}/`);
    expect(refused).toMatchObject({
      message: `the URL's host is not a DNS name: ${long.length} characters, more than the 253 a DNS name may have`,
    });

    const scheme = await answering.check(`${'x'.repeat(1000)}://hooks.example.com/`);
    expect(scheme).toMatchObject({
      rule: 'https',
      message: 'must use https, not a scheme (of 1000 characters, more than the 100 repeated)',
    });
    expect(await answering.check(`${'x'.repeat(100)}://hooks.example.com/`)).toMatchObject({
      message: `must use https, not ${'x'.repeat(100)}`,
    });

    // A DNS name of 253 characters is a name, and too long to repeat; one of 100 is repeated whole.
    const loopback = new DestinationPolicy({ resolver: async () => ['127.0.0.1'] });
    expect(await loopback.check(`https://${longest}/`)).toMatchObject({
      rule: 'address',
      message:
        "the URL's host (of 253 characters, more than the 100 repeated) resolves to 127.0.0.1, a loopback address",
    });
    const hundred = `${label(63)}.${label(36)}`;
    expect(await loopback.check(`https://${hundred}/`)).toMatchObject({
      message: `${hundred} resolves to 127.0.0.1, a loopback address`,
    });
    const nowhere = new DestinationPolicy({
      resolver: async () => {
        throw new DnsFailure(true, 'ENOTFOUND');
      },
    });
    expect(await nowhere.check(`https://${longest}/`)).toMatchObject({
      rule: 'dns',
      message: "the URL's host (of 253 characters, more than the 100 repeated) does not resolve",
    });

    const failing = new DestinationPolicy({
      resolver: async () => {
        throw new DnsFailure(false, `SERVFAIL ${'detail '.repeat(500)}`);
      },
    });
    const unavailable = await failing.check(`https://${longest}/`);
    expect(unavailable.kind).toBe('unavailable');
    expect((unavailable as { message: string }).message.length).toBeLessThan(300);
  });
});

describe('the system resolver', () => {
  it('takes EINVAL (a name getaddrinfo cannot even ask about) for a name that never resolves', async () => {
    // libuv refuses a name over 255 characters before any query, so this needs no network.
    await expect(systemResolver()('a'.repeat(300))).rejects.toMatchObject({
      name: 'DnsFailure',
      permanent: true,
      message: 'EINVAL',
    });
  });
});
