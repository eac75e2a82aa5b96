/**
 * The streams this process held that are gone (dropped, or taken over by another stream), kept for as long as
 * a worker may wait on one. A delivery worker reads a listener's stream id, then notifies the stream's holder:
 * one that read the id just before the stream went, and notified after, named a stream its holder no longer
 * had, and the notice was ignored. The worker waited for its attempt timeout, and the attempt, recorded as
 * timed out, was retried on the schedule rather than as soon as a stream held the listener again. The holder
 * now answers such a notice as the worker answers when it finds no stream: not connected, at once (and the
 * next stream gets the delivery at once, repository.ts's resumeDeliveries). Only the process that held the
 * stream knows it is gone; another process's hub, which never held it, leaves the notice to its holder.
 */
import type { AttemptReport } from './protocol.js';
import { NOT_CONNECTED } from './repository.js';

export class GoneStreams {
  /** Stream id → when it went (ms). */
  readonly #at = new Map<string, number>();

  add(streamId: string, at: number): void {
    this.#at.set(streamId, at);
  }

  /** What the worker of a notice naming `streamId` is told, when the stream is one of these. */
  reportFor(notice: { streamId: string; deliveryId: string; attempt: number }): AttemptReport | undefined {
    if (!this.#at.has(notice.streamId)) return undefined;
    return {
      deliveryId: notice.deliveryId,
      attempt: notice.attempt,
      statusCode: null,
      durationMs: 0,
      error: NOT_CONNECTED,
    };
  }

  /**
   * Forgets those gone longer than `timeoutMs` ago: a worker that read a stream's id before it went has
   * stopped waiting by then (its attempt began before the read, and ends at the timeout).
   */
  forgetOlderThan(now: number, timeoutMs: number): void {
    for (const [streamId, at] of this.#at) if (now - at > timeoutMs) this.#at.delete(streamId);
  }
}
