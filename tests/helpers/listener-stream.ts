/**
 * A sandbox webhook listener's stream as a test speaks it: Node's own WebSocket (what `svc listen`
 * uses), the bearer token in the upgrade request, JSON messages queued until the test takes them.
 */
import type { TestApp } from './app.js';
import type { HttpClient } from './http.js';

export interface StreamMessage {
  type: string;
  [member: string]: any;
}

export interface TestStream {
  /** The next message (waits up to timeoutMs). */
  next(timeoutMs?: number): Promise<StreamMessage>;
  /** Messages received and not yet taken. */
  pending(): StreamMessage[];
  send(message: unknown): void;
  /** Answers an attempt with a status, as svc listen does after forwarding it. */
  report(attempt: StreamMessage, statusCode: number, durationMs?: number): void;
  close(): Promise<void>;
  /** Resolves with the close code once the stream ends (either side). */
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** Opens the listener's stream; rejects when the upgrade is refused. */
export async function openStream(baseUrl: string, path: string, token: string): Promise<TestStream> {
  const url = `${baseUrl.replace(/^http/, 'ws')}${path}`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } } as never);
  const queue: StreamMessage[] = [];
  const waiters: Array<(message: StreamMessage) => void> = [];
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as StreamMessage;
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.addEventListener('close', (event) => resolve({ code: event.code, reason: event.reason })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`the stream ${path} was refused`)), { once: true });
  });
  return {
    next(timeoutMs = 10_000) {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(take), 1);
          reject(new Error(`no message on ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        const take = (message: StreamMessage) => {
          clearTimeout(timer);
          resolve(message);
        };
        waiters.push(take);
      });
    },
    pending: () => [...queue],
    send: (message) => socket.send(JSON.stringify(message)),
    report(attempt, statusCode, durationMs = 3) {
      socket.send(
        JSON.stringify({
          type: 'result',
          deliveryId: attempt.deliveryId,
          attempt: attempt.attempt,
          statusCode,
          durationMs,
        }),
      );
    },
    async close() {
      socket.close();
      await closed;
    },
    closed,
  };
}

/** Opens a listener (POST) and answers its document. */
export async function createListener(http: HttpClient, token: string, eventTypes?: string[]) {
  const response = await http.post('/api/v1/sandbox/webhook-listeners', {
    token,
    json: eventTypes ? { eventTypes } : {},
  });
  if (response.status !== 201) throw new Error(`listener create failed: ${response.status} ${response.text}`);
  return response.body.data as { id: string; secret: string; streamPath: string; eventTypes: string[] };
}

/** Whether the server holds the listener's stream (once it does not, the listener's grace runs). */
export async function streamHeld(t: Pick<TestApp, 'database'>, listenerId: string): Promise<boolean> {
  const row = await t.database.db
    .selectFrom('webhook_listeners')
    .select('stream_id')
    .where('id', '=', listenerId)
    .executeTakeFirstOrThrow();
  return row.stream_id !== null;
}
