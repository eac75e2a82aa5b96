import { describe, expect, it } from 'vitest';
import {
  type ClaimCandidate,
  chooseFairly,
  destinationOf,
  expressSlots,
  type InFlight,
  mayClaimAtBirth,
} from '../../../src/modules/outbox/fair-claim.js';

const SLOTS = { shared: 16, express: 2 };
const idle: InFlight = { tenants: new Map(), destinations: new Map(), total: 0 };

/** `count` due deliveries of a tenant to a destination, ids `<tenant>-<destination>-<n>`. */
function due(tenantId: string, destination: string, count: number): ClaimCandidate[] {
  return Array.from({ length: count }, (_, n) => ({ id: `${tenantId}-${destination}-${n}`, tenantId, destination }));
}

function inFlight(entries: Array<[tenant: string, destination: string, count: number]>): InFlight {
  const tenants = new Map<string, number>();
  const destinations = new Map<string, number>();
  let total = 0;
  for (const [tenant, destination, count] of entries) {
    tenants.set(tenant, (tenants.get(tenant) ?? 0) + count);
    destinations.set(destination, (destinations.get(destination) ?? 0) + count);
    total += count;
  }
  return { tenants, destinations, total };
}

const countBy = (chosen: ClaimCandidate[], key: 'tenantId' | 'destination') =>
  chosen.reduce<Record<string, number>>((counts, candidate) => {
    counts[candidate[key]] = (counts[candidate[key]] ?? 0) + 1;
    return counts;
  }, {});

describe('chooseFairly', () => {
  it('gives an idle worker to one tenant: every shared slot, in due order, no express slot', () => {
    const chosen = chooseFairly(due('c', 'slow', 100), idle, SLOTS);
    expect(chosen.map((candidate) => candidate.id)).toEqual(due('c', 'slow', 16).map((candidate) => candidate.id));
  });

  it('shares the slots round-robin between tenants whatever their due order', () => {
    // C's backlog fell due first; A's and B's few deliveries after it.
    const candidates = [...due('c', 'slow', 40), ...due('a', 'fast', 3), ...due('b', 'other', 20)];
    const chosen = chooseFairly(candidates, idle, SLOTS);
    expect(chosen).toHaveLength(16);
    expect(countBy(chosen, 'tenantId')).toEqual({ c: 7, a: 3, b: 6 });
    // The first three slots go to three tenants.
    expect(new Set(chosen.slice(0, 3).map((candidate) => candidate.tenantId))).toEqual(new Set(['a', 'b', 'c']));
  });

  it('fills slots no other tenant can use (work-conserving)', () => {
    const chosen = chooseFairly([...due('c', 'slow', 40), ...due('a', 'fast', 1)], idle, SLOTS);
    expect(countBy(chosen, 'tenantId')).toEqual({ c: 15, a: 1 });
  });

  it('counts what is in flight: a tenant holding its share gets nothing while another has due deliveries', () => {
    const busy = inFlight([['c', 'slow', 8]]);
    const chosen = chooseFairly([...due('c', 'slow', 40), ...due('a', 'fast', 20)], busy, SLOTS);
    expect(countBy(chosen, 'tenantId')).toEqual({ a: 8 });
  });

  it('gives a tenant with nothing in flight an express slot when every shared slot is busy, one per tenant', () => {
    const full = inFlight([['c', 'slow', 16]]);
    const chosen = chooseFairly(
      [...due('c', 'slow', 40), ...due('a', 'fast', 5), ...due('b', 'x', 5), ...due('d', 'y', 5)],
      full,
      SLOTS,
    );
    expect(chosen.map((candidate) => candidate.tenantId)).toEqual(['a', 'b']);
  });

  it('gives no express slot to a tenant that already has a delivery in flight', () => {
    const full = inFlight([
      ['c', 'slow', 15],
      ['a', 'fast', 1],
    ]);
    expect(chooseFairly([...due('c', 'slow', 4), ...due('a', 'fast', 4)], full, SLOTS)).toEqual([]);
  });

  it('shares one tenant’s slots among its destinations', () => {
    const chosen = chooseFairly([...due('c', 'slow', 40), ...due('c', 'fast', 40)], idle, SLOTS);
    expect(countBy(chosen, 'destination')).toEqual({ slow: 8, fast: 8 });
  });

  it('keeps a destination that tenants share to its share while another destination has due deliveries', () => {
    // t2 sends to the destination t1 uses and to one of its own: t2's slots go to its own.
    const candidates = [...due('t1', 'shared', 10), ...due('t2', 'shared', 10), ...due('t2', 'other', 10)];
    const chosen = chooseFairly(candidates, idle, SLOTS);
    expect(countBy(chosen, 'destination')).toEqual({ shared: 8, other: 8 });
    expect(countBy(chosen, 'tenantId')).toEqual({ t1: 8, t2: 8 });
  });

  it('when the shares conflict, each tenant still gets its turn', () => {
    // Destination shares alone would give 'own' 8 slots; tenant shares give every tenant 4.
    const candidates = [...due('t1', 'shared', 10), ...due('t2', 'shared', 10), ...due('t3', 'shared', 10)];
    const chosen = chooseFairly([...candidates, ...due('t4', 'own', 10)], idle, SLOTS);
    expect(countBy(chosen, 'tenantId')).toEqual({ t1: 4, t2: 4, t3: 4, t4: 4 });
  });

  it('claims nothing beyond the slots, and nothing without candidates', () => {
    expect(chooseFairly([], idle, SLOTS)).toEqual([]);
    const full = inFlight([['c', 'slow', 18]]);
    expect(chooseFairly(due('a', 'fast', 3), full, SLOTS)).toEqual([]);
    const chosen = chooseFairly(due('a', 'fast', 3), inFlight([['c', 'slow', 14]]), SLOTS);
    expect(chosen).toHaveLength(2);
  });

  it('with one slot (WEBHOOK_CONCURRENCY=1) still serves tenants in turn', () => {
    const slots = { shared: 1, express: expressSlots(1) };
    const candidates = [...due('c', 'slow', 5), ...due('a', 'fast', 5)];
    // The shared slot, and the express slot for the second tenant.
    expect(chooseFairly(candidates, idle, slots).map((candidate) => candidate.tenantId)).toEqual(['c', 'a']);
    const next = chooseFairly(candidates, inFlight([['c', 'slow', 1]]), slots);
    expect(next.map((candidate) => candidate.tenantId)).toEqual(['a']);
    const both = inFlight([
      ['c', 'slow', 1],
      ['a', 'fast', 1],
    ]);
    expect(chooseFairly(candidates, both, slots)).toEqual([]);
    // Once c's delivery ends, the shared slot goes to c again: a has one in flight.
    expect(chooseFairly(candidates, inFlight([['a', 'fast', 1]]), slots).map((c) => c.tenantId)).toEqual(['c']);
  });
});

describe('expressSlots and destinationOf', () => {
  it('keeps an eighth of the slots, at least one, as express slots', () => {
    expect([1, 4, 8, 16, 17, 100].map(expressSlots)).toEqual([1, 1, 1, 2, 3, 13]);
  });

  it('names a destination by host and port', () => {
    expect(destinationOf('https://Hooks.Example.com/a?b=1')).toBe('hooks.example.com');
    expect(destinationOf('https://hooks.example.com:8443/a')).toBe('hooks.example.com:8443');
    expect(destinationOf('https://hooks.example.com:443/other')).toBe('hooks.example.com');
    expect(destinationOf('not a url')).toBe('not a url');
  });
});

describe('mayClaimAtBirth', () => {
  const nobody = new Set<string>();

  it('lets one tenant take every shared slot while nothing waits, and never an express slot', () => {
    expect(mayClaimAtBirth('a', idle, nobody, SLOTS)).toBe(true);
    expect(mayClaimAtBirth('a', inFlight([['a', 'x', 15]]), nobody, SLOTS)).toBe(true);
    expect(mayClaimAtBirth('a', inFlight([['a', 'x', 16]]), nobody, SLOTS)).toBe(false);
    expect(mayClaimAtBirth('b', inFlight([['a', 'x', 16]]), nobody, SLOTS)).toBe(false);
  });

  it('keeps a tenant within its share of the slots while other tenants have work', () => {
    // Two tenants in flight: eight slots each.
    const busy = inFlight([
      ['a', 'x', 8],
      ['b', 'y', 2],
    ]);
    expect(mayClaimAtBirth('a', busy, nobody, SLOTS)).toBe(false);
    expect(mayClaimAtBirth('b', busy, nobody, SLOTS)).toBe(true);
    // A third tenant with deliveries waiting in the queue counts too: shares of six.
    expect(mayClaimAtBirth('b', inFlight([['b', 'y', 6]]), new Set(['a', 'c']), SLOTS)).toBe(false);
    expect(mayClaimAtBirth('b', inFlight([['b', 'y', 5]]), new Set(['a', 'c']), SLOTS)).toBe(true);
  });

  it('leaves half the shared slots to the queue while deliveries wait in it, whoever they are for', () => {
    expect(mayClaimAtBirth('a', inFlight([['a', 'x', 7]]), new Set(['a']), SLOTS)).toBe(true);
    expect(mayClaimAtBirth('a', inFlight([['a', 'x', 8]]), new Set(['a']), SLOTS)).toBe(false);
    expect(mayClaimAtBirth('b', inFlight([['a', 'x', 8]]), new Set(['a']), SLOTS)).toBe(false);
    // One slot: none at birth while anything waits.
    expect(mayClaimAtBirth('a', idle, new Set(['a']), { shared: 1, express: 1 })).toBe(false);
  });
});
