/**
 * The cap on a tenant's active webhook subscriptions (issue 15 item 3): 16 by default, changed per tenant
 * by the operator (maxActiveSubscriptions). A create, or a PATCH to isActive true, that would exceed it is
 * 422 subscription-limit-reached with the cap as a member; deactivating frees a place; legacy
 * subscriptions count but the operator is never refused; a tenant over its cap keeps its subscriptions
 * and their deliveries. Concurrent creates and activations are counted one after the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problems.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';
import { type DeliveryHarness, deliveredNow, recordTestEvent, startDeliveryHarness } from '../helpers/webhooks.js';

let h: DeliveryHarness;
beforeAll(async () => {
  h = await startDeliveryHarness({}, { started: false });
});
afterAll(async () => h?.close());

/** A tenant with a token and the given cap (the default 16 when not given). */
async function tenant(maxActiveSubscriptions?: number) {
  return tenantWithToken(h.t, maxActiveSubscriptions === undefined ? {} : { maxActiveSubscriptions });
}

const create = (token: string, path = h.receiver.endpoint().path) =>
  h.t.http.post('/api/v1/webhook-subscriptions', {
    token,
    json: { targetUrl: h.receiver.url(path), eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
const setActive = (token: string, id: string, isActive: boolean) =>
  h.t.http.patch(`/api/v1/webhook-subscriptions/${id}`, { token, json: { isActive } });
const setLimit = (tenantId: string, maxActiveSubscriptions: number) =>
  admin(h.t, 'PATCH', `/admin/v1/tenants/${tenantId}`, { maxActiveSubscriptions });
const activeCount = async (token: string) =>
  (await h.t.http.get('/api/v1/webhook-subscriptions', { token })).body.data.filter((s: any) => s.isActive).length;

/** Asserts the 422 subscription-limit-reached problem with its members. */
function expectLimitReached(response: Awaited<ReturnType<typeof create>>, limit: number, active: number) {
  expectProblem(response, 422, 'subscription-limit-reached');
  expect(response.body).toMatchObject({ maxActiveSubscriptions: limit, activeSubscriptions: active });
  expect(response.body.errors).toBeUndefined();
  expect(response.body.detail).toContain(`at most ${limit}`);
}

describe('the cap on active subscriptions', () => {
  it('is 16 by default: the 17th create is 422 subscription-limit-reached naming the cap', async () => {
    const client = await tenant();
    for (let index = 0; index < 16; index++) expect((await create(client.token)).status).toBe(201);
    expectLimitReached(await create(client.token), 16, 16);
    expect(await activeCount(client.token)).toBe(16);
  });

  it('a PATCH to isActive true over the cap is 422 and leaves the subscription inactive', async () => {
    const client = await tenant(2);
    const first = (await create(client.token)).body.data.id;
    await create(client.token);
    expect((await setActive(client.token, first, false)).status).toBe(200);
    expect((await create(client.token)).status).toBe(201);
    expectLimitReached(await setActive(client.token, first, true), 2, 2);
    const listed = (await h.t.http.get('/api/v1/webhook-subscriptions', { token: client.token })).body.data;
    expect(listed.find((s: any) => s.id === first).isActive).toBe(false);
    // Other changes of an inactive subscription are not activations.
    const described = await h.t.http.patch(`/api/v1/webhook-subscriptions/${first}`, {
      token: client.token,
      json: { description: 'parked' },
    });
    expect(described.status).toBe(200);
  });

  it('deactivating frees a place for a create and for an activation', async () => {
    const client = await tenant(1);
    const only = (await create(client.token)).body.data.id;
    expectLimitReached(await create(client.token), 1, 1);
    expect((await setActive(client.token, only, false)).status).toBe(200);
    const second = await create(client.token);
    expect(second.status).toBe(201);
    expect((await setActive(client.token, second.body.data.id, false)).status).toBe(200);
    expect((await setActive(client.token, only, true)).status).toBe(200);
    // Setting isActive true on an active subscription is no activation: never refused.
    expect((await setActive(client.token, only, true)).status).toBe(200);
  });

  it('the operator raises and lowers the cap; a tenant over it keeps its subscriptions but adds none', async () => {
    const client = await tenant(1);
    const ids = [(await create(client.token)).body.data.id];
    expectLimitReached(await create(client.token), 1, 1);
    expect((await setLimit(client.tenantId, 3)).body.data.maxActiveSubscriptions).toBe(3);
    for (let index = 0; index < 2; index++) ids.push((await create(client.token)).body.data.id);
    expectLimitReached(await create(client.token), 3, 3);

    expect((await setLimit(client.tenantId, 1)).status).toBe(200);
    expect(await activeCount(client.token)).toBe(3);
    expectLimitReached(await create(client.token), 1, 3);
    // Its active subscriptions can still be changed, and deactivated one by one.
    const renamed = await h.t.http.patch(`/api/v1/webhook-subscriptions/${ids[0]}`, {
      token: client.token,
      json: { description: 'still mine', eventTypes: ['ticket.created', 'job.completed'] },
    });
    expect(renamed.status).toBe(200);
    expect((await setActive(client.token, ids[0], false)).status).toBe(200);
    expectLimitReached(await setActive(client.token, ids[0], true), 1, 2);
    expect((await setActive(client.token, ids[1], false)).status).toBe(200);
    expectLimitReached(await create(client.token), 1, 1);
    expect((await setActive(client.token, ids[2], false)).status).toBe(200);
    expect((await create(client.token)).status).toBe(201);
  });

  it('legacy subscriptions count towards the cap, and the operator is not refused', async () => {
    const client = await tenant(1);
    for (let index = 0; index < 2; index++) {
      const legacy = await admin(h.t, 'POST', `/admin/v1/tenants/${client.tenantId}/webhook-subscriptions`, {
        targetUrl: h.receiver.url(h.receiver.endpoint().path),
        eventTypes: ['ticket.created'],
      });
      expect(legacy.status, legacy.text).toBe(201);
    }
    expectLimitReached(await create(client.token), 1, 2);
  });

  it('a tenant over its cap keeps receiving on every active subscription', async () => {
    const client = await tenant(3);
    const endpoints = [h.receiver.endpoint(), h.receiver.endpoint(), h.receiver.endpoint()];
    for (const endpoint of endpoints) expect((await create(client.token, endpoint.path)).status).toBe(201);
    expect((await setLimit(client.tenantId, 1)).status).toBe(200);
    const event = await recordTestEvent(h.t, client.tenantId);
    const deliveries = await deliveredNow(h.t, h.worker, event.id);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    for (const endpoint of endpoints)
      expect(endpoint.requests.map((request) => request.headers['x-svc-event-id'])).toEqual([event.id]);
  });

  it('concurrent creates one below the cap: exactly one passes', async () => {
    const client = await tenant(2);
    await create(client.token);
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(client.token)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    for (const answer of answers.filter((answer) => answer.status !== 201)) expectLimitReached(answer, 2, 2);
    expect(await activeCount(client.token)).toBe(2);
  });

  it('concurrent activations and creates one below the cap: exactly one passes', async () => {
    const client = await tenant(3);
    const parked: string[] = [];
    for (let index = 0; index < 3; index++) parked.push((await create(client.token)).body.data.id);
    for (const id of parked.slice(0, 2)) expect((await setActive(client.token, id, false)).status).toBe(200);
    expect((await create(client.token)).status).toBe(201);
    // 2 of 3 active: one place left for the four requests racing for it.
    const answers = await Promise.all([
      setActive(client.token, parked[0]!, true),
      setActive(client.token, parked[1]!, true),
      create(client.token),
      create(client.token),
    ]);
    expect(answers.filter((answer) => answer.status < 300)).toHaveLength(1);
    for (const answer of answers.filter((answer) => answer.status >= 300)) expectLimitReached(answer, 3, 3);
    expect(await activeCount(client.token)).toBe(3);
  });
});

describe('the subscriptions a tenant holds in all', () => {
  it('are its active cap and 100 inactive ones: a create past them is 422 naming both, an inactive one is reused', async () => {
    const client = await tenant(1);
    let last = '';
    // Create and switch off, as a tenant flooding its (and the operator's) lists would: 101 held in all.
    for (let index = 0; index < 101; index++) {
      const created = await create(client.token);
      expect(created.status, created.text).toBe(201);
      last = created.body.data.id;
      if (index < 100) expect((await setActive(client.token, last, false)).status).toBe(200);
    }
    expect((await setActive(client.token, last, false)).status).toBe(200);
    const refused = await create(client.token);
    expectProblem(refused, 422, 'subscription-limit-reached');
    expect(refused.body).toMatchObject({
      maxActiveSubscriptions: 1,
      activeSubscriptions: 0,
      maxSubscriptions: 101,
      subscriptions: 101,
    });
    expect(refused.body.detail).toContain('Reuse an inactive one');
    // Reusing one switches it on: the active cap alone applies.
    expect((await setActive(client.token, last, true)).status).toBe(200);
    const listed = (await h.t.http.get('/api/v1/webhook-subscriptions', { token: client.token })).body.data;
    expect(listed).toHaveLength(101);
  });
});
