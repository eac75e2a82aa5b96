/**
 * What the operator's visit create and workflow refuse: bodies that are not exactly one known action
 * (422), actions the visit's status does not allow (409), unknown visits and tenants (404). A refused
 * action changes nothing and records no event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEventsOfResource } from '../../src/modules/outbox/repository/events.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { admin } from '../helpers/tenants.js';
import {
  createVisit,
  operatorCreateVisit,
  visitBody,
  visitInStatus,
  visitTenant,
  type VisitTenant,
  withNewSite,
  workflowAction,
} from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
let visitId: string;
beforeAll(async () => {
  t = await startTestApp();
  v = await visitTenant(t);
  visitId = (await createVisit(t, v)).id;
});
afterAll(async () => t?.close());

describe('workflow bodies', () => {
  it.each([
    ['no action', {}, { action: ['is required'] }],
    [
      'an unknown action',
      { action: 'cancel' },
      { action: ['must be one of: assign-rep; schedule; dispatch; complete; transmit-deliverables'] },
    ],
    [
      'an action that is not a string',
      { action: 1 },
      { action: ['must be one of: assign-rep; schedule; dispatch; complete; transmit-deliverables'] },
    ],
    [
      'an action in another case',
      { action: 'Dispatch' },
      { action: ['must be one of: assign-rep; schedule; dispatch; complete; transmit-deliverables'] },
    ],
    [
      'a member the action does not take',
      { action: 'dispatch', scheduledDate: '2026-12-02' },
      { scheduledDate: ['is not a known field'] },
    ],
    ['assign-rep without fieldRepName', { action: 'assign-rep' }, { fieldRepName: ['is required'] }],
    [
      'assign-rep with contact details',
      { action: 'assign-rep', fieldRepName: 'Jo', phone: '555-0100' },
      { phone: ['is not a known field'] },
    ],
    ['an empty fieldRepName', { action: 'assign-rep', fieldRepName: '' }, { fieldRepName: ['must not be empty'] }],
    [
      'a blank fieldRepName',
      { action: 'assign-rep', fieldRepName: '   ' },
      { fieldRepName: ['must not be blank; send null to clear the rep'] },
    ],
    [
      'a fieldRepName of 201 characters',
      { action: 'assign-rep', fieldRepName: 'x'.repeat(201) },
      { fieldRepName: ['must be at most 200 characters'] },
    ],
    [
      'a fieldRepName that is not a string',
      { action: 'assign-rep', fieldRepName: 7 },
      { fieldRepName: ['must be a string or null'] },
    ],
    ['schedule without scheduledDate', { action: 'schedule', etaTime: '09:00' }, { scheduledDate: ['is required'] }],
    [
      'schedule with a status',
      { action: 'schedule', scheduledDate: '2026-12-02', status: 'Scheduled' },
      { status: ['is read-only and cannot be written'] },
    ],
    [
      'a scheduledDate that does not exist',
      { action: 'schedule', scheduledDate: '2026-02-30' },
      { scheduledDate: ['must be a date such as 2026-11-22'] },
    ],
    [
      'February 29th of a common year',
      { action: 'schedule', scheduledDate: '2027-02-29' },
      { scheduledDate: ['must be a date such as 2026-11-22'] },
    ],
    [
      'month 13',
      { action: 'schedule', scheduledDate: '2026-13-01' },
      { scheduledDate: ['must be a date such as 2026-11-22'] },
    ],
    [
      'a date-time as scheduledDate',
      { action: 'schedule', scheduledDate: '2026-12-02T09:00:00Z' },
      { scheduledDate: expect.arrayContaining(['must be a date such as 2026-11-22']) },
    ],
    [
      'a null scheduledDate',
      { action: 'schedule', scheduledDate: null },
      { scheduledDate: ['must be a string, not null'] },
    ],
  ])('%s is 422', async (_label, body, errors) => {
    const response = await workflowAction(t, visitId, body);
    expect(expectInvalid(response, Object.keys(errors))).toEqual(errors);
  });

  it.each(['24:00', '9:30', '12:60', '12:00:00', '12h00', ''])('etaTime %j is 422', async (etaTime) => {
    const response = await workflowAction(t, visitId, { action: 'schedule', scheduledDate: '2026-12-02', etaTime });
    expectInvalid(response, ['etaTime']);
  });

  it.each([
    [{ action: 'complete', qualityReviewPassed: false }, { qualityReviewPassed: ['must be true'] }],
    [{ action: 'complete' }, { qualityReviewPassed: ['is required'] }],
    [{ action: 'complete', qualityReviewPassed: 'true' }, { qualityReviewPassed: ['must be true'] }],
    [{ action: 'transmit-deliverables', notes: '' }, { notes: ['must not be empty'] }],
    [{ action: 'transmit-deliverables', notes: 'x'.repeat(10_001) }, { notes: ['must be at most 10000 characters'] }],
    [{ action: 'transmit-deliverables', notes: ['a'] }, { notes: ['must be a string or null'] }],
  ])('%j is 422', async (body, errors) => {
    expect(expectInvalid(await workflowAction(t, visitId, body), Object.keys(errors))).toEqual(errors);
  });

  it.each([
    'Awaiting reassignment',
    'awaiting REASSIGNMENT ',
    '\u200bAwaiting  reassignment',
    'Awaiting\u00a0re\u200dassignment\u202e',
  ])('refuses %j as a rep name: it reports a cleared assignment', async (fieldRepName) => {
    const errors = expectInvalid(await workflowAction(t, visitId, { action: 'assign-rep', fieldRepName }), [
      'fieldRepName',
    ]);
    expect(errors.fieldRepName![0]).toMatch(/send null to clear/);
  });

  it('refuses bodies that are not an object, and malformed JSON', async () => {
    for (const body of [[{ action: 'dispatch' }], 'dispatch', null])
      expectInvalid(await workflowAction(t, visitId, body), ['body']);
    const malformed = await t.http.post(`/admin/v1/site-visits/${visitId}/workflow`, {
      token: t.adminToken,
      body: '{"action":',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(malformed, 400, 'malformed-request');
  });

  // A name that shows nothing is blank however it is made (src/lib/visible-text.ts, as for tenant names).
  it.each([
    ['zero-width spaces', '\u200b\u200b'],
    ['ideographic spaces', '\u3000\u3000'],
    ['a word joiner between no-break spaces', '\u00a0\u2060\u00a0'],
    ['a right-to-left override and a byte-order mark', '\u202e\ufeff'],
  ])('a fieldRepName of only %s is 422 naming fieldRepName', async (_label, fieldRepName) => {
    const errors = expectInvalid(await workflowAction(t, visitId, { action: 'assign-rep', fieldRepName }), [
      'fieldRepName',
    ]);
    expect(errors).toEqual({ fieldRepName: ['must not be blank; send null to clear the rep'] });
  });

  it('a name with such characters around or inside it is a name, stored and reported as given', async () => {
    const fieldRepName = '\u3000Par\u200bvin\u200cه\u200b';
    const visit = await createVisit(t, v);
    const response = await workflowAction(t, visit.id, { action: 'assign-rep', fieldRepName });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.attributes.fieldRepName).toBe(fieldRepName);
    const [, assigned] = await listEventsOfResource(t.database.db, v.tenantId, visit.id);
    expect(assigned?.data).toMatchObject({ fieldRepName });
  });

  it('changed nothing: the visit is still at version 1 with its one event', async () => {
    const visit = await admin(t, 'GET', `/admin/v1/site-visits/${visitId}`);
    expect(visit.body.data.meta.version).toBe(1);
    expect(visit.body.data.attributes.status).toBe('New');
    expect(await listEventsOfResource(t.database.db, v.tenantId, visitId)).toHaveLength(1);
  });
});

describe('transitions the status does not allow', () => {
  const refused: Record<'New' | 'Scheduled' | 'Dispatched' | 'Completed', Record<string, unknown>[]> = {
    New: [
      { action: 'dispatch' },
      { action: 'complete', qualityReviewPassed: true },
      { action: 'transmit-deliverables', notes: 'early' },
    ],
    Scheduled: [{ action: 'complete', qualityReviewPassed: true }, { action: 'transmit-deliverables' }],
    Dispatched: [{ action: 'schedule', scheduledDate: '2026-12-09' }, { action: 'dispatch' }],
    Completed: [
      { action: 'schedule', scheduledDate: '2026-12-09' },
      { action: 'dispatch' },
      { action: 'complete', qualityReviewPassed: true },
      { action: 'assign-rep', fieldRepName: 'Too Late' },
    ],
  };

  it.each(Object.keys(refused) as (keyof typeof refused)[])(
    'on a %s visit are 409 invalid-state, and change nothing',
    async (status) => {
      const visit = await visitInStatus(t, await withNewSite(t, v, 0), status);
      const before = await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`);
      const eventsBefore = await listEventsOfResource(t.database.db, v.tenantId, visit.id);
      for (const action of refused[status]) {
        const response = await workflowAction(t, visit.id, action);
        expectProblem(response, 409, 'invalid-state');
        expect(response.body.detail).toContain(`The visit is ${status}`);
      }
      expect((await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`)).body).toEqual(before.body);
      expect(await listEventsOfResource(t.database.db, v.tenantId, visit.id)).toEqual(eventsBefore);
    },
  );
});

describe('unknown visits and tenants', () => {
  it('a workflow action or a read of an unknown visit is 404', async () => {
    for (const id of ['visit_00000000000000000000000000', 'nothing', visitId.toUpperCase()]) {
      expectProblem(await workflowAction(t, id, { action: 'dispatch' }), 404, 'not-found');
      expectProblem(await admin(t, 'GET', `/admin/v1/site-visits/${id}`), 404, 'not-found');
    }
  });

  it('a visit id longer than 100 characters is 422', async () => {
    expectInvalid(await workflowAction(t, `visit_${'x'.repeat(100)}`, { action: 'dispatch' }), ['visitId']);
  });

  it('a create for an unknown tenant is 404, and records nothing', async () => {
    const response = await admin(t, 'POST', '/admin/v1/tenants/tnt_nobody/site-visits', visitBody(v));
    expectProblem(response, 404, 'not-found');
    expect(response.body.detail).toMatch(/Tenant/);
    expect(
      await t.database.db.selectFrom('events').select('id').where('tenant_id', '=', 'tnt_nobody').execute(),
    ).toEqual([]);
  });
});

describe("operator create bodies and references (the client create's rules)", () => {
  it.each([
    ['a read-only status', { status: 'Scheduled' }, 422, 'validation-error', ['status']],
    ['a workflow field', { fieldRepName: 'Jo' }, 422, 'validation-error', ['fieldRepName']],
    ['a missing description', { description: undefined }, 422, 'validation-error', ['description']],
    ['dueDate before startDate', { dueDate: '2026-11-30T09:00:00Z' }, 422, 'validation-error', ['dueDate']],
    ["another tenant's or unknown project", { projectId: 999_999_999_999 }, 409, 'invalid-project', ['projectId']],
    ['an unknown site', { clientSiteId: 'NOPE' }, 404, 'not-found', undefined],
    ['an unknown item', { itemName: 'Nope' }, 404, 'not-found', undefined],
    ["a site asset that is not the site's", { siteAssetIds: [1] }, 409, 'invalid-site-asset', ['siteAssetIds']],
  ])('%s: %i', async (_label, overrides, status, slug, fields) => {
    const response = await operatorCreateVisit(t, v, overrides);
    expectProblem(response, status, slug, fields);
  });

  it('a duplicate clientTicketNumber is 409 duplicate-resource, and no second event is recorded', async () => {
    const first = await operatorCreateVisit(t, v, { clientTicketNumber: 'DUP-OP' });
    expect(first.status).toBe(201);
    expectProblem(await operatorCreateVisit(t, v, { clientTicketNumber: 'DUP-OP' }), 409, 'duplicate-resource');
    const events = await t.database.db
      .selectFrom('events')
      .select('data')
      .where('tenant_id', '=', v.tenantId)
      .execute();
    expect(
      events.filter((event) => (event.data as { clientTicketNumber: string }).clientTicketNumber === 'DUP-OP'),
    ).toHaveLength(1);
  });
});
