/**
 * A tenant's webhook host names are asked of DNS (c-ares) rather than of getaddrinfo, which holds a thread
 * of libuv's pool until the system resolver gives up: names under a tenant's own silent name server then
 * stalled every tenant's lookups, and the other work of the pool (file I/O; scrypt stands for it here). Here against a name
 * server of the test's own on the loopback, which answers some names, refuses others and holds the `silent.`
 * ones until the test lets them go.
 */
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationPolicy } from '../../../src/modules/outbox/destination-policy.js';
import { networkResolver } from '../../../src/modules/outbox/resolvers.js';

const scrypt = promisify(crypto.scrypt);

const RECORDS: Record<string, { A?: string[]; AAAA?: string[]; rcode?: 'NXDOMAIN' | 'SERVFAIL' }> = {
  'dual.example': { A: ['93.184.216.34'], AAAA: ['2606:2800:220:1:248:1893:25c8:1946'] },
  'four.example': { A: ['93.184.216.35'] },
  'missing.example': { rcode: 'NXDOMAIN' },
  'broken.example': { rcode: 'SERVFAIL' },
};

/** A name server on 127.0.0.1: answers from RECORDS, holds `silent.` names until `release()` (then answers them). */
async function startNameServer() {
  const socket = dgram.createSocket('udp4');
  const held: Array<() => void> = [];
  /** The questions held (`A name`), so that a test can wait for its own. */
  const heldQuestions = new Set<string>();
  let released = false;
  socket.on('message', (message, peer) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const record = RECORDS[question.name];
    const addresses = question.type === 'A' || question.type === 'AAAA' ? (record?.[question.type] ?? []) : [];
    const answer = () =>
      socket.send(
        dnsPacket.encode({
          type: 'response',
          id: query.id ?? 0,
          flags: flagsWith(record === undefined ? 'NXDOMAIN' : record.rcode),
          questions: [question],
          answers: addresses.map((data) => ({ type: question.type as 'A', name: question.name, ttl: 60, data })),
        }),
        peer.port,
        peer.address,
      );
    if (!question.name.startsWith('silent.') || released) return answer();
    held.push(answer);
    heldQuestions.add(`${question.type} ${question.name}`);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    holds: (question: string) => heldQuestions.has(question),
    release: () => {
      released = true;
      for (const answer of held.splice(0)) answer();
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A response's flags; dns-packet takes the response code in their low four bits (NXDOMAIN 3, SERVFAIL 2). */
function flagsWith(rcode: 'NXDOMAIN' | 'SERVFAIL' | undefined): number {
  const code = rcode === 'NXDOMAIN' ? 3 : rcode === 'SERVFAIL' ? 2 : 0;
  return dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | code;
}

let nameServer: Awaited<ReturnType<typeof startNameServer>>;
beforeAll(async () => {
  nameServer = await startNameServer();
});
afterAll(async () => {
  nameServer.release();
  await nameServer.close();
});

describe('a tenant name, asked of DNS', () => {
  it('resolves to its A and AAAA addresses, IPv4 first, or to the family it has', async () => {
    const resolve = networkResolver({ servers: [nameServer.server] });
    expect(await resolve('dual.example')).toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    expect(await resolve('four.example')).toEqual(['93.184.216.35']);
  });

  it('is permanently unresolvable on NXDOMAIN, temporarily on SERVFAIL or silence', async () => {
    const resolve = networkResolver({ servers: [nameServer.server], timeoutMs: 300 });
    await expect(resolve('missing.example')).rejects.toMatchObject({ name: 'DnsFailure', permanent: true });
    await expect(resolve('broken.example')).rejects.toMatchObject({ name: 'DnsFailure', permanent: false });
    await expect(resolve('silent.once.example')).rejects.toMatchObject({
      name: 'DnsFailure',
      permanent: false,
      message: 'timed out after 300 ms',
    });
  });

  it('holds no thread while a name server stays silent: other names and scrypt go on', async () => {
    const resolve = networkResolver({ servers: [nameServer.server], timeoutMs: 60_000 });
    let silentSettled = 0;
    const names = Array.from({ length: 24 }, (_, index) => `silent.${index}.tenant.example`);
    const silent = names.map((name) => resolve(name).finally(() => silentSettled++));
    // Every silent name has been asked (A and AAAA) before the others run.
    await waitFor(() => names.every((name) => nameServer.holds(`A ${name}`) && nameServer.holds(`AAAA ${name}`)));

    expect(await resolve('dual.example')).toHaveLength(2);
    // More scrypt calls than libuv's pool has threads: each needs one, which a held getaddrinfo would take.
    await Promise.all(Array.from({ length: 8 }, (_, index) => scrypt(`secret ${index}`, 'salt', 32)));
    expect(silentSettled).toBe(0);

    // Let go, they are answered (NXDOMAIN: not in RECORDS) as any name is.
    nameServer.release();
    for (const outcome of await Promise.allSettled(silent))
      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'DnsFailure', permanent: true } });
  });
});

describe('the destination policy', () => {
  it("resolves the operator's test destinations with the system resolver (the hosts file's localhost)", async () => {
    const policy = new DestinationPolicy({ testAllowedDestinations: ['localhost:8443'] });
    const decision = await policy.check('https://localhost:8443/hooks');
    expect(decision).toMatchObject({ kind: 'allowed', hostname: 'localhost', port: 8443 });
    expect((decision as { addresses: string[] }).addresses).toContain('127.0.0.1');
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
