/**
 * A listener's stream is a WebSocket: the HTTP rate limit counts its opening, not the frames its client sends.
 * One stream sending 1-byte text frames as fast as it could (516,000 in 4 s) held the event loop, and another
 * tenant's GET waited 6 s (hostile-tenant probe). A client may send one frame for each it is to answer (a result
 * per attempt, a pong per ping) and 100 more; past that its stream is closed with
 * 1008, and its connection ends if it goes on sending.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPARE_FRAMES } from '../../src/modules/webhook-listeners/frame-budget.js';
import type { TestApp } from '../helpers/app.js';
import { createListener, openStream, type TestStream } from '../helpers/listener-stream.js';
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

/** Whether the stream is still open a moment after what was sent (a closed one has its code by then). */
async function closeCode(stream: TestStream): Promise<number | undefined> {
  const open = Symbol('open');
  const ended = await Promise.race([stream.closed, new Promise((resolve) => setTimeout(() => resolve(open), 300))]);
  return ended === open ? undefined : (ended as { code: number }).code;
}

describe("the frames of a listener's stream", () => {
  it(`a client may send ${SPARE_FRAMES} frames nothing asked for; one more closes its stream with 1008`, async () => {
    const { stream } = await openListener();
    junk(stream, SPARE_FRAMES);
    expect(await closeCode(stream)).toBeUndefined();
    junk(stream, 1);
    expect(await closeCode(stream)).toBe(1008);
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
    expect(await closeCode(stream)).toBe(1008);
  });
});
