/**
 * System lookups hold a thread of libuv's pool (shared with scrypt and file I/O) until the resolver gives up,
 * whatever the policy's timeout: a tenant naming hosts under a silent name server of its own could hold all
 * four. At most SYSTEM_LOOKUP_SLOTS run at once; the others wait within their timeout and, once it passes,
 * give their place up without running.
 */
import { describe, expect, it } from 'vitest';
import { type AddressLookup, systemResolver } from '../../../src/modules/outbox/destination-policy.js';
import { LookupSlots, SYSTEM_LOOKUP_SLOTS } from '../../../src/modules/outbox/lookup-slots.js';

/** A lookup whose `slow.` names answer only when released, counting what runs at once. */
function fakeLookup() {
  const held: Array<() => void> = [];
  const asked: string[] = [];
  let running = 0;
  let most = 0;
  const lookup: AddressLookup = async (hostname) => {
    asked.push(hostname);
    most = Math.max(most, ++running);
    try {
      if (hostname.startsWith('slow.')) await new Promise<void>((release) => held.push(release));
      return ['93.184.215.14'];
    } finally {
      running--;
    }
  };
  return { lookup, held, asked, most: () => most };
}

describe('system lookups', () => {
  it('run at most SYSTEM_LOOKUP_SLOTS at once, fewer than libuv pool threads', async () => {
    expect(SYSTEM_LOOKUP_SLOTS).toBeLessThan(4);
    const fake = fakeLookup();
    const resolve = systemResolver(50, fake.lookup, new LookupSlots(SYSTEM_LOOKUP_SLOTS));
    const slow = Array.from({ length: 6 }, (_, index) => resolve(`slow.${index}.tenant.example`).catch((e) => e));
    // Waiting behind slow names is a temporary failure at the timeout, and the name is never asked.
    await expect(resolve('fast.example')).rejects.toMatchObject({ name: 'DnsFailure', permanent: false });
    for (const failure of await Promise.all(slow.slice(SYSTEM_LOOKUP_SLOTS)))
      expect(failure).toMatchObject({ name: 'DnsFailure', permanent: false, message: 'timed out after 50 ms' });
    expect(fake.most()).toBe(SYSTEM_LOOKUP_SLOTS);
    expect(fake.asked).toHaveLength(SYSTEM_LOOKUP_SLOTS);

    // A slot is free again when its lookup ends, not when its caller stopped waiting.
    await expect(resolve('fast.example')).rejects.toMatchObject({ permanent: false });
    for (const release of fake.held) release();
    await expect(resolve('fast.example')).resolves.toEqual(['93.184.215.14']);
    expect(fake.asked.filter((name) => name === 'fast.example')).toHaveLength(1);
  });

  it('share one set of slots in a process: resolvers made apart count together', async () => {
    const fake = fakeLookup();
    const first = systemResolver(50, fake.lookup);
    const second = systemResolver(50, fake.lookup);
    const slow = [first('slow.a.example'), second('slow.b.example'), first('slow.c.example')];
    await Promise.allSettled(slow);
    expect(fake.most()).toBe(SYSTEM_LOOKUP_SLOTS);
    for (const release of fake.held) release();
  });
});
