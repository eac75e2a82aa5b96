/**
 * The sandbox lifecycle simulator: an integrator drives its own visit through the operator's workflow and
 * its receiver gets the real, signed events. Single actions follow the operator's rules; the route is
 * tenant-scoped, needs site-visits:write, is rate-limited, and does not exist in production.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument } from '../../src/http/openapi.js';
import { EVENT_TYPES } from '../../src/modules/outbox/types.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { tokenFor } from '../helpers/tenants.js';
import { createVisit } from '../helpers/visits.js';
import { type DeliveryHarness, startDeliveryHarness, type TestReceiver, verifyV1 } from '../helpers/webhooks.js';

let harness: DeliveryHarness;
let receiver: TestReceiver;
let t: TestApp;

beforeAll(async () => {
  harness = await startDeliveryHarness();
  ({ receiver, t } = harness);
});
afterAll(() => harness?.close());

const simulatePath = (visitId: string) => `/api/v1/sandbox/site-visits/${visitId}/simulate`;

describe('POST /api/v1/sandbox/site-visits/{id}/simulate', () => {
  it('complete-lifecycle walks a New visit to Completed and the receiver gets every signed event in order', async () => {
    const v = await harness.visitTenant();
    const endpoint = receiver.endpoint();
    const secret = `whsec-${randomUUID()}`;
    const subscription = await t.http.post('/api/v1/webhook-subscriptions', {
      token: v.fullToken,
      json: { targetUrl: endpoint.url, eventTypes: [...EVENT_TYPES], secret },
    });
    expect(subscription.status, subscription.text).toBe(201);
    const visit = await createVisit(t, v);

    const response = await t.http.post(simulatePath(visit.id), {
      token: v.token,
      json: { action: 'complete-lifecycle' },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toMatchObject({
      id: visit.id,
      attributes: { status: 'Completed' },
      meta: { version: visit.meta.version + 6 },
    });
    const events = response.body.meta.events as { id: string; type: string }[];
    const lifecycle = [
      'rep.assigned',
      'job.scheduled',
      'schedule.updated',
      'job.dispatched',
      'job.completed',
      'deliverables.transmitted',
    ];
    expect(events.map((event) => event.type)).toEqual(lifecycle);

    // ticket.created, then the six lifecycle events, each verified with the subscription's secret.
    const requests = await endpoint.waitFor(7, 60_000);
    const received = requests.map((request) => {
      const verified = verifyV1(request.headers, request.body, secret);
      expect(verified.ok, JSON.stringify(verified)).toBe(true);
      return (verified as unknown as { event: { id: string; type: string; data: Record<string, unknown> } }).event;
    });
    const byId = new Map(received.map((event) => [event.id, event]));
    for (const event of events) expect(byId.get(event.id)?.type).toBe(event.type);
    expect(byId.get(events[0]!.id)?.data).toMatchObject({
      fieldRepName: 'Sandbox Rep',
      clientTicketNumber: visit.attributes.clientTicketNumber,
    });

    // Once done, the lifecycle cannot start again.
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: v.token, json: { action: 'complete-lifecycle' } }),
      409,
      'invalid-state',
    );
  });

  it('one action at a time follows the operator workflow rules; a repeated action records nothing', async () => {
    const v = await harness.visitTenant();
    const visit = await createVisit(t, v);
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: v.token, json: { action: 'dispatch' } }),
      409,
      'invalid-state',
    );

    const schedule = { action: 'schedule', scheduledDate: '2026-12-02', etaTime: '10:00' };
    const first = await t.http.post(simulatePath(visit.id), { token: v.token, json: schedule });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.attributes.status).toBe('Scheduled');
    expect(first.body.meta.events.map((event: { type: string }) => event.type)).toEqual(['job.scheduled']);
    const again = await t.http.post(simulatePath(visit.id), { token: v.token, json: schedule });
    expect(again.body.meta.events).toEqual([]);
    expect(again.body.data.meta.version).toBe(first.body.data.meta.version);

    // The lifecycle starts only from New.
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: v.token, json: { action: 'complete-lifecycle' } }),
      409,
      'invalid-state',
    );
    // The operator's body rules: a member the action does not take, an unknown action.
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: v.token, json: { action: 'dispatch', notes: 'x' } }),
      422,
      'validation-error',
    );
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: v.token, json: { action: 'teleport' } }),
      422,
      'validation-error',
    );
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: v.token, json: { action: 'assign-rep', fieldRepName: '  ' } }),
      422,
      'validation-error',
    );
  });

  it("needs site-visits:write and never reaches another tenant's visit", async () => {
    const [owner, other] = [await harness.visitTenant(), await harness.visitTenant()];
    const visit = await createVisit(t, owner);
    const readOnly = await tokenFor(t, owner, 'site-visits:read');
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: readOnly, json: { action: 'dispatch' } }),
      403,
      'forbidden',
    );
    expectProblem(await t.http.post(simulatePath(visit.id), { json: { action: 'dispatch' } }), 401, 'unauthorized');
    expectProblem(
      await t.http.post(simulatePath(visit.id), { token: other.token, json: { action: 'complete-lifecycle' } }),
      404,
      'not-found',
    );
    const unchanged = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: owner.token });
    expect(unchanged.body.data.attributes.status).toBe('New');
  });

  it('is documented under the Sandbox tag of the client document', () => {
    const document = clientOpenApiDocument(t.app);
    const operation = document.paths['/api/v1/sandbox/site-visits/{id}/simulate']?.post;
    expect(operation?.tags).toEqual(['Sandbox']);
    expect(operation?.security).toEqual([{ clientCredentials: ['site-visits:write'] }]);
    expect(Object.keys(operation?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '401', '403', '404', '409', '422', '429']),
    );
    expect((document.tags as { name: string }[]).map((tag) => tag.name)).toContain('Sandbox');
  });
});

describe('the simulator outside the sandbox, and under the rate limit', () => {
  it('does not exist in production: 404 problem, and absent from the document', async () => {
    const production = await startTestApp({ config: { environment: 'production' }, database: t.database });
    try {
      const response = await production.http.post(simulatePath('visit_x'), { json: { action: 'complete-lifecycle' } });
      expectProblem(response, 404, 'not-found');
      const document = clientOpenApiDocument(production.app);
      expect(Object.keys(document.paths).filter((path) => path.includes('sandbox'))).toEqual([]);
      expect((document.tags as { name: string }[]).map((tag) => tag.name)).not.toContain('Sandbox');
    } finally {
      await production.close();
    }
  });

  it('is counted by the rate limit like every client route', async () => {
    const limited = await startTestApp({ config: { rateLimitPerMinute: 2 }, database: t.database });
    try {
      for (let index = 0; index < 2; index++)
        expect((await limited.http.post(simulatePath('visit_x'), { json: { action: 'dispatch' } })).status).toBe(401);
      expectProblem(
        await limited.http.post(simulatePath('visit_x'), { json: { action: 'dispatch' } }),
        429,
        'rate-limit-exceeded',
      );
      expect((await limited.metrics.rateLimitRefusals.get()).values[0]?.value).toBe(1);
    } finally {
      await limited.close();
    }
  });
});
