/**
 * Which due deliveries a worker claims, so that one tenant's webhooks cannot starve another's (issue 15):
 * the worker's slots are shared out among the tenants, and among the destinations, that have deliveries
 * due or in flight, instead of going to whatever fell due first.
 *
 * - Each free slot goes to the tenant with the fewest deliveries in flight on this worker (round-robin by
 *   tenant), and within it to the destination with the fewest (round-robin by destination), the earliest
 *   due first on ties. While others have due deliveries, neither a tenant nor a destination gets more than
 *   its share (the slots divided by the tenants, or destinations, with work); a slot nobody else can use
 *   goes to whoever can, so an idle system still gives one tenant all the slots. Where the two shares
 *   cannot both hold (several tenants sending to one receiver, another tenant elsewhere), the tenants'
 *   turns win: each tenant gets as many slots as the others.
 * - Express slots: a tenant with nothing in flight on this worker may take one of a few slots beyond
 *   WEBHOOK_CONCURRENCY when all of them are busy, so its next event does not wait for a slow receiver of
 *   someone else to answer (a busy tenant's deliveries may already hold every slot: there is no preemption).
 *
 * Pure: the worker passes what is in flight and the candidates the queue offers (repository: claiming).
 */

/** A due delivery the worker could claim. Candidates come in due order (earliest first). */
export interface ClaimCandidate {
  id: string;
  tenantId: string;
  /** The receiver it goes to (destinationOf its target URL). */
  destination: string;
}

/** What this worker has in flight: counts per tenant and per destination, and in all. */
export interface InFlight {
  tenants: ReadonlyMap<string, number>;
  destinations: ReadonlyMap<string, number>;
  total: number;
}

export interface Slots {
  /** WEBHOOK_CONCURRENCY: the slots every delivery may use. */
  shared: number;
  /** Slots beyond those, for a tenant with nothing in flight (expressSlots). */
  express: number;
}

/** The express slots of a worker with `concurrency` slots: an eighth of them, at least one. */
export function expressSlots(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 8));
}

/** The destination of a target URL: its host and port (a receiver is one server, whatever the path). */
export function destinationOf(targetUrl: string): string {
  try {
    return new URL(targetUrl).host;
  } catch {
    return targetUrl;
  }
}

/**
 * What a worker has in flight, from its attempts (each to a tenant's destination) and its birth claims
 * (a tenant's, whose destinations are not known until the event is written: counted for the tenant only).
 */
export function inFlightOf(
  attempts: Iterable<{ tenantId: string; destination: string }>,
  birthClaims: Iterable<string>,
): InFlight {
  const tenants = new Map<string, number>();
  const destinations = new Map<string, number>();
  let total = 0;
  for (const { tenantId, destination } of attempts) {
    tenants.set(tenantId, (tenants.get(tenantId) ?? 0) + 1);
    destinations.set(destination, (destinations.get(destination) ?? 0) + 1);
    total++;
  }
  for (const tenantId of birthClaims) {
    tenants.set(tenantId, (tenants.get(tenantId) ?? 0) + 1);
    total++;
  }
  return { tenants, destinations, total };
}

/** How many slots of `slots` each of `parties` may take while the others have work. */
function shareOf(slots: number, parties: number): number {
  return Math.max(1, Math.ceil(slots / Math.max(1, parties)));
}

function withWork(inFlight: ReadonlyMap<string, number>, due: Iterable<string>): number {
  const parties = new Set(due);
  for (const [party, count] of inFlight) if (count > 0) parties.add(party);
  return parties.size;
}

/**
 * The shared slots that deliveries claimed at birth may fill: all of them while nothing waits in the queue,
 * half of them while something does (the claim, woken when half are free, then finds room for the waiting).
 */
export function birthSlots(waiting: ReadonlySet<string>, slots: Slots): number {
  return waiting.size === 0 ? slots.shared : Math.floor(slots.shared / 2);
}

/**
 * Whether a new event of `tenantId` may have its deliveries claimed at birth (birth-claims.ts), given what
 * is in flight (the attempts, and the deliveries claimed at birth waiting to start: not the creates still
 * under way) and the tenants whose due deliveries the last claim left waiting:
 * while nothing waits, whenever a shared slot is free; while something does, only below half the shared
 * slots (the claim, woken when half of them are free, then always finds room for the waiting), and only
 * below the tenant's share, counting those tenants as having work. Express slots are the claim's alone.
 */
export function mayClaimAtBirth(
  tenantId: string,
  inFlight: InFlight,
  waiting: ReadonlySet<string>,
  slots: Slots,
): boolean {
  if (inFlight.total >= birthSlots(waiting, slots)) return false;
  const share = shareOf(slots.shared, withWork(inFlight.tenants, [...waiting, tenantId]));
  return (inFlight.tenants.get(tenantId) ?? 0) < share;
}

/** Chooses, in the order they should start, the candidates to claim now. */
export function chooseFairly(
  candidates: readonly ClaimCandidate[],
  inFlight: InFlight,
  slots: Slots,
): ClaimCandidate[] {
  const tenantCount = new Map(inFlight.tenants);
  const destinationCount = new Map(inFlight.destinations);
  const tenantShare = shareOf(
    slots.shared,
    withWork(
      inFlight.tenants,
      candidates.map((candidate) => candidate.tenantId),
    ),
  );
  const destinationShare = shareOf(
    slots.shared,
    withWork(
      inFlight.destinations,
      candidates.map((candidate) => candidate.destination),
    ),
  );
  // Each tenant's candidates in due order, with their place in the overall due order.
  const queues = new Map<string, Array<{ candidate: ClaimCandidate; order: number }>>();
  candidates.forEach((candidate, order) => {
    const queue = queues.get(candidate.tenantId) ?? [];
    queue.push({ candidate, order });
    queues.set(candidate.tenantId, queue);
  });

  const chosen: ClaimCandidate[] = [];
  let total = inFlight.total;
  for (;;) {
    let best: { tenant: string; index: number; rank: number[] } | undefined;
    for (const [tenant, queue] of queues) {
      const running = tenantCount.get(tenant) ?? 0;
      if (total >= (running === 0 ? slots.shared + slots.express : slots.shared)) continue;
      // Within the tenant: the destination with the fewest in flight, the earliest due on ties.
      let index = 0;
      for (let next = 1; next < queue.length; next++) {
        const count = (entry: { candidate: ClaimCandidate }) => destinationCount.get(entry.candidate.destination) ?? 0;
        if (count(queue[next]!) < count(queue[index]!)) index = next;
      }
      const entry = queue[index]!;
      const sending = destinationCount.get(entry.candidate.destination) ?? 0;
      const withinShares = running < tenantShare && sending < destinationShare;
      // Within the shares first; then the fewest in flight per tenant, per destination; then due order.
      const rank = [withinShares ? 0 : 1, running, sending, queue[0]!.order];
      if (!best || isBefore(rank, best.rank)) best = { tenant, index, rank };
    }
    if (!best) return chosen;
    const queue = queues.get(best.tenant)!;
    const { candidate } = queue.splice(best.index, 1)[0]!;
    if (queue.length === 0) queues.delete(best.tenant);
    chosen.push(candidate);
    total++;
    tenantCount.set(candidate.tenantId, (tenantCount.get(candidate.tenantId) ?? 0) + 1);
    destinationCount.set(candidate.destination, (destinationCount.get(candidate.destination) ?? 0) + 1);
  }
}

function isBefore(a: readonly number[], b: readonly number[]): boolean {
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return a[index]! < b[index]!;
  return false;
}
