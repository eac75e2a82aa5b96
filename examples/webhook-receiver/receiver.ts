/**
 * A webhook receiver done right (SPEC Signature (v1) and Delivery semantics): read the raw body, verify
 * it with `verifyWebhook` before parsing anything, store the event under its body `id` (a duplicate is
 * simply not stored again), and answer 2xx only once the event is durable, also for an event already
 * stored. Anything else answers non-2xx, so the service tries again later.
 *
 * Work on the event (your own processing) belongs after storage, e.g. a job reading the inbox table;
 * `onNewEvent` is called once per new event after it is stored.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from '@site-services/client';
import type { EventStore } from './store.js';

export interface ReceiverOptions {
  /** The subscription's secret (several while rotating). */
  secret: string | readonly string[];
  store: EventStore;
  /** Only this path accepts deliveries (default: every path). */
  path?: string;
  /** Largest body accepted (default 1 MiB; events are small). */
  maxBodyBytes?: number;
  onNewEvent?: (event: WebhookEvent) => void;
  /** Log lines (default: none). */
  log?: (line: string) => void;
}

class BodyTooLarge extends Error {}

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function createReceiverHandler(
  options: ReceiverOptions,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const log = options.log ?? (() => undefined);
  const answer = (response: ServerResponse, status: number, text: string) => {
    response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
  };
  return async (request, response) => {
    if (options.path && new URL(request.url ?? '/', 'http://receiver').pathname !== options.path)
      return answer(response, 404, 'not found');
    if (request.method !== 'POST') return answer(response, 405, 'POST only');
    let rawBody: Buffer;
    try {
      rawBody = await readBody(request, options.maxBodyBytes ?? 1024 * 1024);
    } catch (error) {
      return answer(response, error instanceof BodyTooLarge ? 413 : 400, 'unreadable body');
    }
    let event: WebhookEvent;
    try {
      event = verifyWebhook({ headers: request.headers, rawBody, secret: options.secret });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      log(`refused delivery ${String(request.headers['x-svc-delivery-id'])}: ${error.message}`);
      return answer(response, 401, 'signature refused');
    }
    try {
      const isNew = await options.store.save(event);
      log(`${isNew ? 'stored' : 'duplicate'} ${event.type} ${event.id}`);
      if (isNew) options.onNewEvent?.(event);
      return answer(response, 200, isNew ? 'stored' : 'already stored');
    } catch (error) {
      log(`could not store ${event.id}: ${error instanceof Error ? error.message : String(error)}`);
      return answer(response, 500, 'not stored; try again');
    }
  };
}
