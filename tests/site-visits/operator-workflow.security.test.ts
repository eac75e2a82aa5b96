/**
 * The workflow's boundaries: a tenant-scoped caller (the sandbox simulator) reaches only its own tenant's
 * visits, the client API neither shows nor accepts the workflow's fields, and clients cannot move a visit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Problem } from '../../src/http/problem.js';
import { listEventsOfResource } from '../../src/modules/outbox/repository/events.js';
import { performWorkflowAction } from '../../src/modules/site-visits/workflow.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, visitBody, visitTenant, workflowAction } from '../helpers/visits.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe("tenant-scoped workflow actions (the sandbox simulator's way in)", () => {
  it("act on the tenant's own visit, and find another tenant's visit not at all", async () => {
    const [owner, other] = await Promise.all([visitTenant(t), visitTenant(t)]);
    const visit = await createVisit(t, owner);
    const act = (tenantId: string) =>
      t.database.db
        .transaction()
        .execute((tx) =>
          performWorkflowAction(
            tx,
            { tenantId, visitId: visit.id },
            { action: 'assign-rep', fieldRepName: 'Jo' },
            new Date(),
          ),
        );

    const refusal = await act(other.tenantId).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(Problem);
    expect(refusal).toMatchObject({ slug: 'not-found', status: 404 });
    expect((await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`)).body.data.meta.version).toBe(1);
    expect(await listEventsOfResource(t.database.db, other.tenantId, visit.id)).toEqual([]);

    const outcome = await act(owner.tenantId);
    expect(outcome.visit).toMatchObject({ id: visit.id, tenant_id: owner.tenantId, version: 2, field_rep_name: 'Jo' });
    expect(outcome.event).toMatchObject({ type: 'rep.assigned', tenant_id: owner.tenantId, resource_id: visit.id });
  });
});

describe('the client API and the workflow', () => {
  it('cannot write status or any workflow field, on create or patch', async () => {
    const v = await visitTenant(t);
    const visit = await createVisit(t, v);
    const fields = {
      status: 'Completed',
      fieldRepName: 'Jo',
      scheduledDate: '2026-12-02',
      etaTime: '09:00',
      dispatchedAt: '2026-12-02T09:00:00Z',
    };
    expectInvalid(
      await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, fields) }),
      Object.keys(fields),
    );
    expectInvalid(
      await t.http.patch(`/api/v1/site-visits/${visit.id}`, { token: v.token, json: fields }),
      Object.keys(fields),
    );
  });

  it('has no workflow route: clients cannot move a visit', async () => {
    const v = await visitTenant(t);
    const visit = await createVisit(t, v);
    const response = await t.http.post(`/api/v1/site-visits/${visit.id}/workflow`, {
      token: v.token,
      json: { action: 'dispatch' },
    });
    expectProblem(response, 404, 'not-found');
    // The operator route does not take a client token.
    expectProblem(
      await t.http.post(`/admin/v1/site-visits/${visit.id}/workflow`, { token: v.token, json: { action: 'dispatch' } }),
      401,
      'unauthorized',
    );
  });

  it("shows the status the workflow set, never the rep's name, to every client token", async () => {
    const v = await visitTenant(t);
    const visit = await createVisit(t, v);
    await workflowAction(t, visit.id, { action: 'assign-rep', fieldRepName: 'Private Rep Name' });
    await workflowAction(t, visit.id, { action: 'schedule', scheduledDate: '2026-12-02', etaTime: '07:45' });
    const single = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    const list = await t.http.get('/api/v1/site-visits', { token: v.token });
    expect(single.body.data.attributes.status).toBe('Scheduled');
    for (const response of [single, list]) {
      expect(response.text).not.toContain('Private Rep Name');
      expect(response.text).not.toContain('07:45');
    }
  });
});
