/**
 * One attempt of one delivery, as far as the receiver's answer: the destination checked again, the body
 * signed, and the request sent through the pinned transport; or, for a sandbox listener's target, handed
 * to the process that holds its stream. What comes back is a Verdict (attempt-verdict.ts).
 */
import type { Logger } from 'pino';
import type { WebhookConfig } from '../../config.js';
import { lazyChildLogger } from '../../lib/lazy-logger.js';
import { TwoGenerationCache } from '../../lib/two-generation-cache.js';
import type { Clock } from '../../lib/clock.js';
import { type Verdict, verdictForStatus } from './attempt-verdict.js';
import type { ClaimedDelivery } from './types.js';
import { DestinationPolicy } from './destination-policy.js';
import type { Resolver } from './resolvers.js';
import { toEnvelope } from './service.js';
import { deliveryHeaders, unsealSecret } from './signing.js';
import { isListenerId } from './targets.js';
import { describeTransportError, PinnedTransport, type WebhookTransport } from './transport.js';

/** The error of a claim of an inactive subscription: nothing was sent. */
export const INACTIVE = 'the subscription is inactive';

/**
 * Where the attempts of a sandbox listener's target go: to whichever process holds its stream. The
 * composition root hands the worker webhook-listeners' ListenerRelay; the worker closes it when it stops.
 */
export interface ListenerAttempts {
  attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<Verdict>;
  close(): Promise<void>;
}

export interface AttemptSenderDeps {
  config: Pick<WebhookConfig, 'timeoutMs' | 'leaseMs'>;
  logger: Logger;
  policy: DestinationPolicy;
  transport: WebhookTransport;
  listeners: ListenerAttempts;
  keys: { webhookEncryptionKey: Buffer; legacyWebhookKey: Buffer };
  clock: Clock;
}

/** An attempt made: its verdict, when it started, how long it took, and the logger of its lines. */
export interface AttemptMade {
  verdict: Verdict;
  startedAt: Date;
  durationMs: number;
  log: Logger;
}

/** How long one attempt may take: the configured timeout, kept well inside the lease. */
export function attemptTimeoutMs({ timeoutMs, leaseMs }: Pick<WebhookConfig, 'timeoutMs' | 'leaseMs'>): number {
  return Math.max(1, Math.min(timeoutMs, Math.floor(leaseMs * 0.8)));
}

/** The transport a worker sends through unless given one: pinned to checked addresses, `connections` per address. */
export function pinnedTransportFor(
  deps: { config: Pick<WebhookConfig, 'timeoutMs'>; extraCa?: readonly string[] | undefined },
  connections: number,
): PinnedTransport {
  return new PinnedTransport({
    connectTimeoutMs: deps.config.timeoutMs,
    connections,
    ...(deps.extraCa ? { extraCa: deps.extraCa } : {}),
  });
}

/** The destination policy a worker checks with unless given one: the resolver (DNS for a tenant's names by default) and the configured test hosts. */
export function destinationPolicyFor(deps: {
  config: Pick<WebhookConfig, 'testAllowedDestinations'>;
  resolver?: Resolver | undefined;
}): DestinationPolicy {
  return new DestinationPolicy({
    resolver: deps.resolver,
    testAllowedDestinations: deps.config.testAllowedDestinations,
  });
}

/** Targets whose opened secret an attempt sender keeps, per generation (`openSecret`). */
const OPENED_SECRETS = 1_000;

export class AttemptSender {
  /**
   * Secrets opened for earlier attempts, by target and sealed text, so that a busy target's attempts do not
   * each decrypt its secret again. A rotated secret is sealed anew: its text is another key.
   */
  private readonly openedSecrets = new TwoGenerationCache<string, string>(OPENED_SECRETS);

  constructor(private readonly deps: AttemptSenderDeps) {}

  private get timeoutMs(): number {
    return attemptTimeoutMs(this.deps.config);
  }

  /**
   * Makes one attempt within the attempt timeout (or until `stopSignal` cuts it off); a timeout, a network,
   * TLS or DNS failure is a retry verdict.
   */
  async attempt(delivery: ClaimedDelivery, stopSignal: AbortSignal): Promise<AttemptMade> {
    const startedAt = this.deps.clock.now();
    const started = performance.now();
    // Every line of an attempt names the tenant, event, delivery and attempt: an event can be followed from
    // the request that recorded it (its "event recorded" line) to its last attempt.
    // Made only when a line is written at an enabled level (most attempts write none at warn).
    const log = lazyChildLogger(this.deps.logger, {
      tenantId: delivery.tenant_id,
      eventId: delivery.event.id,
      eventType: delivery.event.type,
      deliveryId: delivery.id,
      subscriptionId: delivery.subscription.id,
      attempt: delivery.attempt,
    });
    // One controller and one timer, cleared when the attempt ends; AbortSignal.timeout with AbortSignal.any
    // would build two more signals per attempt, the composite one tracked through weak references.
    const cutOff = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      cutOff.abort(new DOMException('The attempt timed out', 'TimeoutError'));
    }, this.timeoutMs);
    const stop = () => cutOff.abort(stopSignal.reason);
    if (stopSignal.aborted) stop();
    else stopSignal.addEventListener('abort', stop, { once: true });
    let verdict: Verdict;
    try {
      verdict = await this.send(delivery, cutOff.signal);
    } catch (error) {
      const reason = timedOut ? `timed out after ${this.timeoutMs} ms` : describeTransportError(error);
      verdict = { outcome: 'retry', statusCode: null, error: reason };
    } finally {
      clearTimeout(timer);
      stopSignal.removeEventListener('abort', stop);
    }
    return { verdict, startedAt, durationMs: Math.round(performance.now() - started), log };
  }

  /** Rejects when the signal aborts first, or with the transport's error. */
  private async send(delivery: ClaimedDelivery, signal: AbortSignal): Promise<Verdict> {
    const { subscription, event } = delivery;
    // A sandbox listener is reached through its stream, never by a connection of the server's.
    if (isListenerId(subscription.id)) return this.deps.listeners.attempt(delivery, signal);
    if (!subscription.is_active) return { outcome: 'failed', statusCode: null, error: INACTIVE };

    const decision = await abortable(this.deps.policy.check(subscription.target_url), signal);
    if (decision.kind === 'violation')
      return { outcome: 'failed', statusCode: null, error: `destination refused: ${decision.message}` };
    if (decision.kind === 'unavailable') return { outcome: 'retry', statusCode: null, error: decision.message };

    let secret: string | undefined;
    if (subscription.signing_version === 'v1') {
      secret = subscription.secret_sealed ? this.openSecret(subscription.id, subscription.secret_sealed) : undefined;
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
    const { statusCode } = await this.deps.transport.send({
      url: decision.url,
      hostname: decision.hostname,
      addresses: decision.addresses,
      headers,
      body,
      signal,
    });
    return verdictForStatus(statusCode);
  }

  /** The target's secret, opened with WEBHOOK_ENCRYPTION_KEY (undefined when it does not open). */
  private openSecret(subscriptionId: string, sealed: string): string | undefined {
    const key = `${subscriptionId}\u0000${sealed}`;
    const opened = this.openedSecrets.get(key);
    if (opened !== undefined) return opened;
    const secret = unsealSecret(this.deps.keys.webhookEncryptionKey, subscriptionId, sealed);
    if (secret !== undefined) this.openedSecrets.set(key, secret);
    return secret;
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
