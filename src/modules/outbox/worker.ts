/**
 * The delivery worker (SPEC: Events, Delivery semantics). It claims due deliveries from the queue with
 * FOR UPDATE SKIP LOCKED and a lease (each claim is an attempt), sends each one, and records the outcome:
 * 2xx succeeds; another status, a network, TLS or DNS failure or the timeout is retried on the schedule
 * (with ±20% jitter) until the attempt budget is spent; a destination that now violates the policy, any
 * 3xx, or an inactive subscription fails the delivery at once. Retry-After is ignored.
 *
 * It is woken on commit (LISTEN/NOTIFY on both databases), when half its in-flight deliveries have ended,
 * and by a timer set to the next due time (answered by the claim itself); the poll interval is only a
 * safety net. Outcomes that end together are recorded in one statement. A worker that dies leaves its
 * leases to run out; the deliveries are then claimed again (by any worker, in any process).
 *
 * Its slots are shared out fairly (fair-claim.ts, claiming.ts): round-robin by tenant and by destination
 * rather than in due order, and a tenant with nothing in flight may take one of a few express slots when
 * all are busy, so that one tenant's backlog to a slow receiver cannot starve another tenant's events.
 */
import type { Logger } from 'pino';
import type { WebhookConfig } from '../../config.js';
import type { AppDatabase } from '../../db/database.js';
import { listenForNotifications, type NotificationListener } from '../../db/notifications.js';
import type { DeliveryAttempt } from '../../db/schema.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import type { Metrics } from '../../runtime/metrics.js';
import { toEnvelope } from './service.js';
import { type Verdict, verdictForStatus } from './attempt-verdict.js';
import { type ClaimedDelivery, claimDeliveries, findDueCandidates } from './claiming.js';
import { DestinationPolicy, type Resolver, systemResolver } from './destination-policy.js';
import { chooseFairly, destinationOf, expressSlots, type InFlight, type Slots } from './fair-claim.js';
import { isListenerId } from './targets.js';
import * as attempts from './repository/attempts.js';
import { failExhaustedLeases } from './repository/queue.js';
import { DELIVERY_CHANNEL } from './wake-workers.js';
import { deliveryHeaders, unsealSecret } from './signing.js';
import { describeTransportError, PinnedTransport, type WebhookTransport } from './transport.js';

export interface DeliveryWorkerDeps {
  database: AppDatabase;
  config: WebhookConfig;
  keys: { webhookEncryptionKey: Buffer; legacyWebhookKey: Buffer };
  logger: Logger;
  clock: Clock;
  /** Checks each destination again before each attempt. Default: the system resolver and the configured test hosts. */
  policy?: DestinationPolicy;
  resolver?: Resolver;
  transport?: WebhookTransport;
  /** Extra trusted CAs for the default transport (tests); production uses NODE_EXTRA_CA_CERTS. */
  extraCa?: readonly string[];
  /** Uniform in [0, 1), for the jitter of retry waits. */
  random?: () => number;
  /** Serve only these tenants' deliveries (tests sharing one database); default: every tenant. */
  tenantScope?: ReadonlySet<string>;
  /** Counts attempt outcomes (the process's metrics). */
  metrics?: Metrics;
  /** Hands attempts to sandbox webhook listeners' streams (webhook-listeners' ListenerRelay). */
  listeners: ListenerAttempts;
}

/**
 * Where the attempts of a sandbox listener's target go: to whichever process holds its stream. The
 * composition root hands the worker webhook-listeners' ListenerRelay; the worker closes it when it stops.
 */
export interface ListenerAttempts {
  attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<Verdict>;
  close(): Promise<void>;
}

const JITTER = 0.2;
const INACTIVE = 'the subscription is inactive';

/** The wait before the next attempt of a round, ±20%: the schedule's entry for this attempt, the last one repeating. */
export function retryDelayMs(schedule: readonly number[], attemptInRound: number, random: () => number): number {
  if (schedule.length === 0) return 0;
  const base = schedule[Math.min(attemptInRound - 1, schedule.length - 1)]!;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}

export class DeliveryWorker {
  private readonly db;
  private readonly policy: DestinationPolicy;
  private readonly transport: WebhookTransport;
  private readonly ownsTransport: boolean;
  private readonly random: () => number;
  private readonly listeners: ListenerAttempts;
  private readonly inflight = new Map<
    string,
    { promise: Promise<void>; abort: AbortController; tenantId: string; destination: string }
  >();
  /** WEBHOOK_CONCURRENCY shared slots, and the express slots of tenants with nothing in flight (fair-claim.ts). */
  private readonly slots: Slots;
  private state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = 0;
  private listener: NotificationListener | undefined;
  private lastSweep = 0;
  private abandoned = false;
  /** Attempts launched so far: processAll stops once a claim launches none. */
  private launched = 0;
  /** When this process last recorded a success per subscription: a healthy subscription is written at most once a second. */
  private readonly healthyWrittenAt = new Map<string, number>();
  /** Outcomes finishing together are written in one statement (while one is written, the next ones gather). */
  private readonly outcomes = new Batcher<attempts.AttemptRecord, boolean>((records) =>
    attempts.recordAttempts(this.db, records),
  );

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.db = deps.database.db;
    this.policy =
      deps.policy ??
      new DestinationPolicy({
        resolver: deps.resolver ?? systemResolver(),
        testAllowedDestinations: deps.config.testAllowedDestinations,
      });
    this.slots = { shared: deps.config.concurrency, express: expressSlots(deps.config.concurrency) };
    this.ownsTransport = deps.transport === undefined;
    this.transport =
      deps.transport ??
      new PinnedTransport({
        connectTimeoutMs: deps.config.timeoutMs,
        // Every slot may go to one receiver, the express ones included.
        connections: this.slots.shared + this.slots.express,
        ...(deps.extraCa ? { extraCa: deps.extraCa } : {}),
      });
    this.random = deps.random ?? Math.random;
    this.listeners = deps.listeners;
  }

  /** How long one attempt may take: the configured timeout, kept well inside the lease. */
  private get attemptTimeoutMs(): number {
    const { timeoutMs, leaseMs } = this.deps.config;
    return Math.max(1, Math.min(timeoutMs, Math.floor(leaseMs * 0.8)));
  }

  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'running';
    this.listener = await listenForNotifications(
      this.deps.database,
      DELIVERY_CHANNEL,
      () => this.wake(),
      this.deps.logger,
    );
    this.wake();
  }

  /** Claims and starts due deliveries now (also what a notification, a timer or a finished delivery does). */
  wake(): void {
    if (this.state !== 'running') return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
    });
  }

  /** Resolves when nothing is in flight and no claim is running (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.pumping || this.inflight.size > 0) {
      await Promise.all([this.pumping, ...[...this.inflight.values()].map((entry) => entry.promise)]);
    }
  }

  /**
   * Claims and delivers until nothing is due at the clock's now, then resolves with the number of attempts
   * made: a deterministic drain for tests and tools, where waiting for notifications and timers would be a
   * race. Retries due later (the schedule's waits) and leases held elsewhere stay pending. The worker need
   * not be started; a started one keeps waking as before.
   */
  async processAll(): Promise<number> {
    const first = this.launched;
    const stopped = () => this.state === 'stopping' || this.state === 'stopped';
    for (;;) {
      if (stopped()) return this.launched - first;
      await this.idle();
      // A claim of its own, issued after everything committed before this call (not one already under way).
      if (this.pumping) continue;
      const before = this.launched;
      this.pumping = this.pump().finally(() => {
        this.pumping = undefined;
      });
      await this.idle();
      // Nothing launched and no lost race to choose again after (pumpAgain): nothing is due.
      if ((this.launched === before && !this.pumpAgain) || stopped()) return this.launched - first;
    }
  }

  private async pump(): Promise<void> {
    let delayMs = this.deps.config.pollIntervalMs;
    let races = 0;
    try {
      do {
        this.pumpAgain = false;
        const { config, clock } = this.deps;
        const now = clock.now();
        if (now.getTime() - this.lastSweep >= config.pollIntervalMs) {
          this.lastSweep = now.getTime();
          const exhausted = await failExhaustedLeases(this.db, now, config.maxAttempts, this.deps.tenantScope);
          for (const subscriptionId of exhausted)
            await this.recordHealth(subscriptionId, false, "no outcome recorded: the worker's lease expired");
        }
        const room = this.slots.shared + this.slots.express - this.inflight.size;
        if (room <= 0) return;
        const { candidates, nextDueAt } = await findDueCandidates(
          this.db,
          now,
          room,
          config.maxAttempts,
          this.deps.tenantScope,
        );
        const chosen = chooseFairly(candidates, this.inFlightCounts(), this.slots);
        const claimed = await claimDeliveries(
          this.db,
          chosen.map((candidate) => candidate.id),
          now,
          new Date(now.getTime() + config.leaseMs),
          config.maxAttempts,
        );
        for (const delivery of claimed) this.launch(delivery);
        // Another worker took some of the chosen ones in between: choose again among the rest.
        if (claimed.length < chosen.length && ++races <= 3) this.pumpAgain = true;
        if (nextDueAt) delayMs = Math.min(delayMs, Math.max(0, nextDueAt.getTime() - this.deps.clock.now().getTime()));
      } while (
        this.pumpAgain &&
        this.state === 'running' &&
        this.inflight.size < this.slots.shared + this.slots.express
      );
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'webhook delivery worker could not claim deliveries; retrying');
    } finally {
      this.schedule(delayMs);
    }
  }

  /** What is in flight on this worker, per tenant and per destination. */
  private inFlightCounts(): InFlight {
    const tenants = new Map<string, number>();
    const destinations = new Map<string, number>();
    for (const { tenantId, destination } of this.inflight.values()) {
      tenants.set(tenantId, (tenants.get(tenantId) ?? 0) + 1);
      destinations.set(destination, (destinations.get(destination) ?? 0) + 1);
    }
    return { tenants, destinations, total: this.inflight.size };
  }

  private schedule(delayMs: number): void {
    if (this.state !== 'running') return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDueAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, delayMs);
    this.timer.unref();
  }

  /** Makes sure the worker wakes by `at` (a retry this process just scheduled), without a query. */
  private wakeBy(at: Date): void {
    const delayMs = Math.max(0, at.getTime() - this.deps.clock.now().getTime());
    if (this.timer && this.timerDueAt <= Date.now() + delayMs) return;
    this.schedule(delayMs);
  }

  private launch(delivery: ClaimedDelivery): void {
    const abort = new AbortController();
    const promise = this.deliver(delivery, abort.signal)
      .catch((error) =>
        this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'webhook delivery bookkeeping failed'),
      )
      .finally(() => {
        this.inflight.delete(delivery.id);
        // Claim again in batches: once half the slots are free (or all, for a concurrency of 1), not after
        // every single delivery. New work still wakes the worker at once (notification, timer).
        if (this.inflight.size <= Math.floor(this.deps.config.concurrency / 2)) this.wake();
      });
    this.inflight.set(delivery.id, {
      promise,
      abort,
      tenantId: delivery.tenant_id,
      destination: destinationOf(delivery.subscription.target_url),
    });
    this.launched++;
  }

  /** One attempt of one delivery, from the policy check to the recorded outcome. */
  private async deliver(delivery: ClaimedDelivery, stopSignal: AbortSignal): Promise<void> {
    const { clock, config, logger } = this.deps;
    const startedAt = clock.now();
    const started = performance.now();
    // Every line of an attempt names the tenant, event, delivery and attempt: an event can be followed from
    // the request that recorded it (its "event recorded" line) to its last attempt.
    const log = logger.child({
      tenantId: delivery.tenant_id,
      eventId: delivery.event.id,
      eventType: delivery.event.type,
      deliveryId: delivery.id,
      subscriptionId: delivery.subscription.id,
      attempt: delivery.attempt,
    });
    const timeout = AbortSignal.timeout(this.attemptTimeoutMs);
    const signal = AbortSignal.any([timeout, stopSignal]);

    let verdict: Verdict;
    try {
      verdict = await this.attempt(delivery, signal);
    } catch (error) {
      const reason = timeout.aborted ? `timed out after ${this.attemptTimeoutMs} ms` : describeTransportError(error);
      verdict = { outcome: 'retry', statusCode: null, error: reason };
    }
    if (this.abandoned) return;

    const now = clock.now();
    const entry: DeliveryAttempt = {
      attempt: delivery.attempt,
      at: startedAt.toISOString(),
      statusCode: verdict.statusCode,
      error: verdict.outcome === 'succeeded' ? null : verdict.error,
      durationMs: Math.round(performance.now() - started),
    };
    const attemptInRound = delivery.attempt - delivery.round_start;
    let outcome: attempts.AttemptOutcome;
    if (verdict.outcome === 'succeeded') outcome = { status: 'succeeded' };
    else if (verdict.outcome === 'failed' || attemptInRound >= config.maxAttempts) outcome = { status: 'failed' };
    else
      outcome = {
        status: 'pending',
        nextAttemptAt: new Date(now.getTime() + retryDelayMs(config.retryScheduleMs, attemptInRound, this.random)),
      };

    const recorded = await this.outcomes.add({ deliveryId: delivery.id, entry, outcome, now });
    if (!recorded) {
      log.warn('webhook attempt outcome dropped: the delivery was claimed again after its lease ran out');
      return;
    }
    const counted = outcome.status === 'pending' ? 'retry_scheduled' : outcome.status;
    this.deps.metrics?.deliveries.inc({ outcome: counted });
    this.deps.metrics?.deliveryDuration.observe({ outcome: counted }, (entry.durationMs ?? 0) / 1000);
    if (verdict.outcome === 'succeeded') {
      log.info({ statusCode: verdict.statusCode, durationMs: entry.durationMs }, 'webhook delivered');
    } else {
      const next = outcome.status === 'pending' ? outcome.nextAttemptAt.toISOString() : 'none (failed terminally)';
      log.info(
        { statusCode: verdict.statusCode, error: verdict.error, durationMs: entry.durationMs, next },
        'webhook attempt failed',
      );
    }
    // A claim of an inactive subscription sends nothing, so it says nothing about the receiver's health.
    if (verdict.outcome === 'succeeded' || verdict.error !== INACTIVE)
      await this.recordHealth(delivery.subscription.id, verdict.outcome === 'succeeded', entry.error ?? '');
    // Only now: the next attempt sees this one's health (an automatic deactivation) even with a short wait.
    if (outcome.status === 'pending') this.wakeBy(outcome.nextAttemptAt);
  }

  private async attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<Verdict> {
    const { subscription, event } = delivery;
    // A sandbox listener is reached through its stream, never by a connection of the server's.
    if (isListenerId(subscription.id)) return this.listeners.attempt(delivery, signal);
    if (!subscription.is_active) return { outcome: 'failed', statusCode: null, error: INACTIVE };

    const decision = await abortable(this.policy.check(subscription.target_url), signal);
    if (decision.kind === 'violation')
      return { outcome: 'failed', statusCode: null, error: `destination refused: ${decision.message}` };
    if (decision.kind === 'unavailable') return { outcome: 'retry', statusCode: null, error: decision.message };

    let secret: string | undefined;
    if (subscription.signing_version === 'v1') {
      secret = subscription.secret_sealed
        ? unsealSecret(this.deps.keys.webhookEncryptionKey, subscription.id, subscription.secret_sealed)
        : undefined;
      if (secret === undefined)
        return {
          outcome: 'retry',
          statusCode: null,
          error: 'the subscription secret could not be decrypted (WEBHOOK_ENCRYPTION_KEY changed?)',
        };
    }
    const body = Buffer.from(JSON.stringify(toEnvelope(event)), 'utf8');
    const headers = deliveryHeaders({
      eventId: event.id,
      eventType: event.type,
      deliveryId: delivery.id,
      attempt: delivery.attempt,
      body,
      signingVersion: subscription.signing_version,
      secret,
      legacyKey: this.deps.keys.legacyWebhookKey,
      now: this.deps.clock.now(),
    });
    const { statusCode } = await this.transport.send({
      url: decision.url,
      hostname: decision.hostname,
      addresses: decision.addresses,
      headers,
      body,
      signal,
    });
    return verdictForStatus(statusCode);
  }

  private async recordHealth(subscriptionId: string, success: boolean, error: string): Promise<void> {
    const now = this.deps.clock.now();
    if (success) {
      const written = this.healthyWrittenAt.get(subscriptionId);
      if (written !== undefined && now.getTime() - written < 1_000) return;
      this.healthyWrittenAt.set(subscriptionId, now.getTime());
      if (this.healthyWrittenAt.size > 10_000) this.healthyWrittenAt.clear();
    } else {
      this.healthyWrittenAt.delete(subscriptionId);
    }
    try {
      if (success) await attempts.recordSubscriptionSuccess(this.db, subscriptionId, now);
      else if (
        await attempts.recordSubscriptionFailure(
          this.db,
          subscriptionId,
          now,
          error,
          this.deps.config.autoDisableAfterMs,
        )
      ) {
        this.deps.logger.warn(
          { subscriptionId },
          'webhook subscription deactivated after failing for WEBHOOK_AUTO_DISABLE_AFTER',
        );
      }
    } catch (failure) {
      this.deps.logger.warn({ err: failure, subscriptionId }, 'webhook subscription health not recorded');
    }
  }

  /**
   * Stops claiming, lets every in-flight attempt finish (each ends within the attempt timeout) and records
   * its outcome, then closes the listener and the connections.
   */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    // A worker never started may still have delivered (processAll): its connections close too.
    this.state = 'stopping';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.idle();
    await this.shutDown();
  }

  /**
   * Stops at once as a crashed process would: in-flight attempts are cut off and nothing more is written,
   * so their leases simply run out and the deliveries are claimed again. For crash tests.
   */
  async abandon(): Promise<void> {
    this.abandoned = true;
    this.state = 'stopping';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const entry of this.inflight.values()) entry.abort.abort();
    await this.idle();
    await this.shutDown();
  }

  private async shutDown(): Promise<void> {
    this.state = 'stopped';
    await this.listener?.close();
    this.listener = undefined;
    await this.listeners.close();
    if (this.ownsTransport) await this.transport.close();
  }
}

/** Rejects as soon as the signal aborts, even if the work itself cannot be cancelled (a DNS lookup). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
