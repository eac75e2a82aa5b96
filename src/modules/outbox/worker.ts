/**
 * The delivery worker (SPEC: Events, Delivery semantics). It claims due deliveries from the queue with
 * FOR UPDATE SKIP LOCKED and a lease (each claim is an attempt), sends each one, and records the outcome:
 * 2xx succeeds; another status, a network, TLS or DNS failure or the timeout is retried on the schedule
 * (with ±20% jitter) until the attempt budget is spent; a destination that now violates the policy, any
 * 3xx, or an inactive subscription fails the delivery at once. Retry-After is ignored.
 *
 * It is woken on commit (LISTEN/NOTIFY on both databases), when half its in-flight deliveries have ended,
 * and by a timer set to the next due time (answered by the claim itself); the poll interval is only a
 * safety net. A create of its own process may hand it the deliveries it queued claimed by this worker
 * (birth-claims.ts), which it then starts without claiming them, as soon as a slot is free. Outcomes that end together are recorded in
 * one statement. A worker that dies leaves its leases to run out; the deliveries are then claimed again (by
 * any worker, in any process).
 *
 * Its slots are shared out fairly (fair-claim.ts, claiming.ts): round-robin by tenant and by destination
 * rather than in due order, and a tenant with nothing in flight may take one of a few express slots when
 * all are busy, so that one tenant's backlog to a slow receiver cannot starve another tenant's events.
 *
 * This file is the worker's life (start, wake, launch, drain, stop); its claims are made in rounds by
 * claim-rounds.ts; one attempt is sent by attempt.ts and recorded by attempt-recorder.ts (the wait before a
 * retry: retry-schedule.ts; the target's health: subscription-health.ts).
 */
import type { Logger } from 'pino';
import type { WebhookConfig } from '../../config.js';
import type { AppDatabase } from '../../db/database.js';
import { listenForNotifications, type NotificationListener } from '../../db/notifications.js';
import type { Clock } from '../../lib/clock.js';
import type { Metrics } from '../../runtime/metrics.js';
import {
  AttemptSender,
  attemptTimeoutMs,
  destinationPolicyFor,
  type ListenerAttempts,
  pinnedTransportFor,
} from './attempt.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { BirthClaims } from './birth-claims.js';
import { ClaimRounds } from './claim-rounds.js';
import { InFlightAttempts } from './in-flight-attempts.js';
import type { ClaimedDelivery } from './types.js';
import type { DestinationPolicy } from './destination-policy.js';
import type { Resolver } from './resolvers.js';
import { birthSlots, expressSlots, inFlightOf, mayClaimAtBirth, type Slots } from './fair-claim.js';
import type { WebhookTransport } from './transport.js';
import { WakeTimer } from './wake-timer.js';
import { type BirthClaim, DELIVERY_CHANNEL, type LocalWorker, wakeHere } from './wake-workers.js';

export interface DeliveryWorkerDeps {
  database: AppDatabase;
  config: WebhookConfig;
  keys: { webhookEncryptionKey: Buffer; legacyWebhookKey: Buffer };
  logger: Logger;
  clock: Clock;
  /** Checks each destination again before each attempt. Default: DNS for a tenant's names, the system resolver for the configured test hosts. */
  policy?: DestinationPolicy;
  resolver?: Resolver;
  transport?: WebhookTransport;
  /** Extra trusted CAs for the default transport (tests); production uses NODE_EXTRA_CA_CERTS. */
  extraCa?: readonly string[];
  /** Uniform in [0, 1), for the jitter of retry waits. */
  random?: () => number;
  /** Counts attempt outcomes (the process's metrics). */
  metrics?: Metrics;
  /** Hands attempts to sandbox webhook listeners' streams (webhook-listeners' ListenerRelay). */
  listeners: ListenerAttempts;
}

export class DeliveryWorker implements LocalWorker {
  private readonly db;
  private readonly transport: WebhookTransport;
  private readonly ownsTransport: boolean;
  /** Every attempt not yet recorded, and the slots they hold. */
  private readonly attempts: InFlightAttempts;
  /** WEBHOOK_CONCURRENCY shared slots, and the express slots of tenants with nothing in flight (fair-claim.ts). */
  private readonly slots: Slots;
  private state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  /** Claims due deliveries from the queue, one run of rounds at a time. */
  private readonly rounds: ClaimRounds;
  /** Wakes the worker when the next known delivery is due (or the poll interval has passed). */
  private readonly timer = new WakeTimer(() => this.wake());
  private listener: NotificationListener | undefined;
  private stopLocalWakes: (() => void) | undefined;
  private abandoned = false;
  /** The deliveries of events about to be written, claimed by this worker. */
  private readonly births: BirthClaims;
  /** Attempts launched so far: processAll stops once a claim launches none. */
  private launched = 0;
  /** Sends each attempt (to the receiver, or a listener's stream). */
  private readonly sender: AttemptSender;
  /** Records each attempt's outcome, metrics, log line and the target's health. */
  private readonly recorder: AttemptRecorder;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.db = deps.database.db;
    this.slots = { shared: deps.config.concurrency, express: expressSlots(deps.config.concurrency) };
    this.ownsTransport = deps.transport === undefined;
    // Every slot may go to one receiver, the express ones included.
    this.transport = deps.transport ?? pinnedTransportFor(deps, this.slots.shared + this.slots.express);
    const policy = deps.policy ?? destinationPolicyFor(deps);
    const random = deps.random ?? Math.random;
    this.sender = new AttemptSender({ ...deps, policy, transport: this.transport });
    this.recorder = new AttemptRecorder({ ...deps, db: this.db, random });
    this.attempts = new InFlightAttempts({
      slots: this.slots.shared + this.slots.express,
      logger: deps.logger,
      onSlotFree: () => {
        this.births.startReady();
        // Claim again in batches: once half the slots are free (or all, for a concurrency of 1), not after
        // every single delivery. New work still wakes the worker at once (notification, timer).
        if (this.attempts.sending <= Math.floor(this.deps.config.concurrency / 2)) this.wake();
      },
    });
    this.births = new BirthClaims({
      clock: deps.clock,
      leaseMs: deps.config.leaseMs,
      attemptTimeoutMs: attemptTimeoutMs(deps.config),
      logger: deps.logger,
      // Of the shared slots births may fill (the express slots are the claim's); at least one, so that a
      // delivery already claimed can always start.
      freeSlots: () => Math.max(1, birthSlots(this.rounds.waiting, this.slots)) - this.attempts.sending,
      launch: (delivery) => {
        this.launch(delivery);
        this.deps.metrics?.deliveryClaims.inc({ how: 'birth' });
      },
    });
    this.rounds = new ClaimRounds({
      ...deps,
      db: this.db,
      slots: this.slots,
      attempts: this.attempts,
      births: this.births,
      recorder: this.recorder,
      inFlight: () => inFlightOf(this.startedOrReady(), this.births.tenants()),
      launch: (delivery) => this.launch(delivery),
      running: () => this.state === 'running',
      schedule: (delayMs) => this.schedule(delayMs),
    });
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
    // Commits of this process (ROLE=all) wake it directly, without waiting for their notify, or hand it the
    // deliveries they queued claimed by it.
    this.stopLocalWakes = wakeHere(this.db, this);
    this.wake();
  }

  /** Started and not stopping: its claim rounds run (a ROLE=worker process's readiness, runtime/worker-probes.ts). */
  get running(): boolean {
    return this.state === 'running';
  }

  /** Claims and starts due deliveries now (also what a notification, a timer or a finished delivery does). */
  wake(): void {
    if (this.state === 'running') this.rounds.request();
  }

  /**
   * Claims, for their first attempt, the deliveries of a new event of `tenantId` about to be written
   * (birth-claims.ts), when fair-claim.ts's `mayClaimAtBirth` lets the tenant take a slot now, counting the
   * attempts in flight and the deliveries waiting to start, and while the claims open and the deliveries
   * waiting to start are fewer than a second round of slots (2 × WEBHOOK_CONCURRENCY): each create under
   * way holds one, however long its statement waits.
   */
  claimAtBirth(tenantId: string): BirthClaim | undefined {
    if (this.state !== 'running') return undefined;
    if (this.births.size >= 2 * this.slots.shared) return undefined;
    if (!mayClaimAtBirth(tenantId, inFlightOf(this.startedOrReady(), []), this.rounds.waiting, this.slots))
      return undefined;
    return this.births.claim(tenantId);
  }

  /** Resolves when nothing is in flight or waiting to start, no claim is running and no birth claim is open (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.rounds.underWay || this.attempts.size > 0 || this.births.size > 0)
      await Promise.all([this.rounds.underWay, this.births.settled(), this.attempts.settled()]);
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
      if (this.rounds.underWay) continue;
      const before = this.launched;
      this.rounds.start();
      await this.idle();
      // Nothing launched and no lost race to choose again after (askedAgain): nothing is due.
      if ((this.launched === before && !this.rounds.askedAgain) || stopped()) return this.launched - first;
    }
  }

  /** The attempts holding a slot and the deliveries claimed at birth waiting to start, each to a tenant's destination. */
  private *startedOrReady(): Iterable<{ tenantId: string; destination: string }> {
    yield* this.attempts.holdingSlots();
    yield* this.births.readyTargets();
  }

  private schedule(delayMs: number): void {
    if (this.state === 'running') this.timer.set(delayMs);
  }

  /** Makes sure the worker wakes by `at` (a retry this process just scheduled), without a query. */
  private wakeBy(at: Date): void {
    if (this.state === 'running') this.timer.setAtLatest(Math.max(0, at.getTime() - this.deps.clock.now().getTime()));
  }

  private launch(delivery: ClaimedDelivery): void {
    this.attempts.start(delivery, (signal, requestEnded) => this.deliver(delivery, signal, requestEnded));
    this.launched++;
  }

  /** One attempt of one delivery, from the policy check to the recorded outcome. */
  private async deliver(delivery: ClaimedDelivery, signal: AbortSignal, requestEnded: () => void): Promise<void> {
    const attempt = await this.sender.attempt(delivery, signal);
    if (this.abandoned) return;
    requestEnded();
    const nextAttemptAt = await this.recorder.record(delivery, attempt);
    // Only now: the next attempt sees this one's health (an automatic deactivation) even with a short wait.
    if (nextAttemptAt) this.wakeBy(nextAttemptAt);
  }

  /**
   * Stops claiming, lets every in-flight attempt finish (each ends within the attempt timeout) and records
   * its outcome, then closes the listener and the connections.
   */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    // A worker never started may still have delivered (processAll): its connections close too.
    this.state = 'stopping';
    this.timer.clear();
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
    this.timer.clear();
    this.attempts.abortAll();
    this.births.close();
    await this.idle();
    await this.shutDown();
  }

  private async shutDown(): Promise<void> {
    this.state = 'stopped';
    this.births.close();
    this.stopLocalWakes?.();
    await this.listener?.close();
    this.listener = undefined;
    await this.deps.listeners.close();
    if (this.ownsTransport) await this.transport.close();
  }
}
