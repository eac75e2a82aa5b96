/**
 * A listener's stream is a WebSocket: the HTTP rate limit counts its opening, not the frames its client sends.
 * One stream sending 1-byte text frames as fast as it could (516,000 in 4 s) held the event loop, and another
 * tenant's GET waited 6 s (hostile-tenant probe). A client may send one frame for each it is to answer (a result
 * per attempt, a pong per ping) and 100 more; past that its stream is closed with
 * 1008, and its connection ends if it goes on sending.
 *
 * A listener's stream lives while its client answers the server's pings. A pong is also a frame a client may
 * send unasked (RFC 6455 5.5.3), and any pong counted: a client that never read its stream, so never saw a ping,
 * but sent a pong of its own every few hundred milliseconds kept its stream open for ever, and every attempt
 * sent to it stayed in the server's memory, behind the socket it did not read (hostile-tenant probe: the deaf
 * stream's server side stayed ESTABLISHED while its events piled up; the same client without its pongs was cut
 * within two ticks). Now only the pong that echoes the last ping's payload keeps a stream alive.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SPARE_FRAMES } from '../../src/modules/webhook-listeners/frame-budget.js';
import type { TestApp } from '../helpers/app.js';
import { createListener, openStream, streamHeld, type TestStream } from '../helpers/listener-stream.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { type DeliveryHarness, recordTestEvent, startDeliveryHarness, waitForDeliveries } from '../helpers/webhooks.js';

let harness: DeliveryHarness;
let t: TestApp;
beforeAll(async () => {
  harness = await startDeliveryHarness();
  t = harness.t;
});
afterAll(async () => harness?.close());

async function openListener() {
  const tenant = await tenantWithToken(t, { webhookAccess: true });
  const listener = await createListener(t.http, tenant.token, ['ticket.created']);
  const stream = await openStream(t.baseUrl, listener.streamPath, tenant.token);
  expect((await stream.next()).type).toBe('ready');
  return { tenant, stream };
}

/** Frames no attempt asked for: text the server cannot read, and a result of nothing it sent. */
function junk(stream: TestStream, count: number): void {
  for (let index = 0; index < count; index++)
    stream.send(index % 2 ? 'x' : { type: 'result', deliveryId: 'dlv_none', attempt: 1, statusCode: 200 });
}

/**
 * Whether the stream is still open a moment after what was sent: a closed one has its code by then. Only for
 * a stream expected open (a loaded machine can take longer than the moment to close one); a close expected is
 * awaited with `closedWith`.
 */
async function closeCode(stream: TestStream): Promise<number | undefined> {
  const open = Symbol('open');
  const ended = await Promise.race([stream.closed, new Promise((resolve) => setTimeout(() => resolve(open), 300))]);
  return ended === open ? undefined : (ended as { code: number }).code;
}

/** The stream's close code, however long the close takes. */
async function closedWith(stream: TestStream): Promise<number> {
  return (await stream.closed).code;
}

describe("the frames of a listener's stream", () => {
  it(`a client may send ${SPARE_FRAMES} frames nothing asked for; one more closes its stream with 1008`, async () => {
    const { stream } = await openListener();
    junk(stream, SPARE_FRAMES);
    expect(await closeCode(stream)).toBeUndefined();
    junk(stream, 1);
    expect(await closedWith(stream)).toBe(1008);
  });

  it('a flood is cut at the budget: a client that goes on sending after the close loses its connection', async () => {
    const { stream } = await openListener();
    junk(stream, 50_000);
    // 1008, or 1006 when the connection ended before the client read the close.
    expect([1006, 1008]).toContain((await stream.closed).code);
    // The service answers another tenant at once.
    const other = await tenantWithToken(t);
    const started = performance.now();
    expect((await t.http.get('/api/v1/sites', { token: other.token })).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('each attempt sent allows its result besides the spare frames', async () => {
    const { tenant, stream } = await openListener();
    junk(stream, SPARE_FRAMES);
    const event = await recordTestEvent(t, tenant.tenantId, 'ticket.created');
    const attempt = await stream.next();
    stream.report(attempt, 204);
    const [delivery] = await waitForDeliveries(t, event.id, (all) => all[0]?.status === 'succeeded');
    expect(delivery.attempts).toBe(1);
    expect(await closeCode(stream)).toBeUndefined();
    junk(stream, 1);
    expect(await closedWith(stream)).toBe(1008);
  });
});

/** Pings a client sees before the test judges its stream: enough for the server to have judged its pongs. */
const PINGS = 4;

/** Whether the server still holds the listener's stream. */
const held = (listenerId: string) => streamHeld(t, listenerId);

/** Holds the listeners' table for `ms` (on the embedded database, its one connection with it). */
async function holdListenersTable(ms: number): Promise<void> {
  await t.database.db.transaction().execute(async (tx) => {
    await sql`lock table webhook_listeners in exclusive mode`.execute(tx);
    await new Promise((resolve) => setTimeout(resolve, ms));
  });
}

/** Until the server has recorded the stream's end (the listener's grace runs). */
async function dropped(listenerId: string): Promise<void> {
  while (await held(listenerId)) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * Opens the listener's stream with `ws` (which shows the pings it gets) and answers, once the stream closes
 * or PINGS pings have come, which came first: the close code, or `open`; and whether the server held the
 * stream at that moment. That is read before the socket is terminated: read after, the server's handling of
 * the close could clear the stream first (it did once in CI, on a loaded machine).
 */
async function streamOutcome(autoPong: boolean, whileOpen: (socket: WebSocket) => () => void) {
  const tenant = await tenantWithToken(t, { webhookAccess: true });
  const listener = await createListener(t.http, tenant.token, ['ticket.created']);
  const url = `${t.baseUrl.replace(/^http/, 'ws')}${listener.streamPath}`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${tenant.token}` }, autoPong });
  const outcome = new Promise<number | 'open'>((resolve) => {
    let pings = 0;
    socket.on('ping', () => ++pings === PINGS && resolve('open'));
    socket.on('close', (code) => resolve(code));
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const stop = whileOpen(socket);
  try {
    const ended = await outcome;
    return { outcome: ended, listenerId: listener.id, heldAtOutcome: await held(listener.id) };
  } finally {
    stop();
    socket.terminate();
  }
}

describe("a listener stream's liveness", () => {
  it('cuts a client that never answers a ping, however many pongs of its own it sends', async () => {
    // Pings go unanswered, as by a client that does not read its stream; a pong of its own goes out four times
    // a tick, fewer frames than the pings allow, so that the frame budget does not end the stream first.
    const { outcome, listenerId } = await streamOutcome(false, (socket) => {
      const pongs = setInterval(() => socket.pong(), 250);
      return () => clearInterval(pongs);
    });
    // Terminated (1006), not closed for its frames (1008).
    expect(outcome).toBe(1006);
    await dropped(listenerId);
  });

  it("keeps a client that answers each ping within the tick while a tick's database work runs late", async () => {
    // Each ping is answered 400 ms after it came, well within the second a tick gives. Right after the first, the
    // listeners' table is locked for 1.7 s, so that the next tick's statements wait most of a tick and the one
    // after runs at once. A ping sent after the tick's statements went out 0.7 s into its tick and was judged at
    // the next one, before its answer: the client was cut (1006) each time.
    const { outcome, heldAtOutcome } = await streamOutcome(false, (socket) => {
      let first = true;
      const answer = (data: Buffer) => {
        setTimeout(() => socket.readyState === WebSocket.OPEN && socket.pong(data), 400);
        if (first) void holdListenersTable(1_700);
        first = false;
      };
      socket.on('ping', answer);
      return () => socket.off('ping', answer);
    });
    expect(outcome).toBe('open');
    expect(heldAtOutcome).toBe(true);
  });

  it('keeps a client that answers the pings, as every WebSocket client does', async () => {
    const { outcome, heldAtOutcome } = await streamOutcome(true, () => () => undefined);
    expect(outcome).toBe('open');
    expect(heldAtOutcome).toBe(true);
  });
});
