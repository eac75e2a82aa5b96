/**
 * A 409 duplicate-resource names the existing resource of the caller's tenant in `existing: {type, id}`
 * (src/http/duplicate-resource.ts): sites (create, with or without a key, and patch), site visits (create
 * through either path, the operator's create, patch), the operator's projects and items; under a race the
 * losers name the winner; never another tenant's resource; without the member when it cannot be read.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { DuplicateResource } from '../../src/http/duplicate-resource.js';
import { problemResponses } from '../../src/http/schemas.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectProblem } from '../helpers/problems.js';
import { admin, siteBody, tenantWithToken } from '../helpers/tenants.js';
import {
  createVisit,
  operatorCreateVisit,
  postVisit,
  type VisitTenant,
  visitBody,
  visitTenant,
} from '../helpers/visits.js';

let t: TestApp;
let token: string;
let v: VisitTenant;
/** What the test route's lookup answers (`GET /api/v1/duplicate-test`). */
let lookup: () => Promise<{ type: string; id: string } | undefined>;

beforeAll(async () => {
  t = await startTestApp({
    configure: (app) => {
      app.get(
        '/api/v1/duplicate-test',
        {
          schema: {
            operationId: 'duplicateTest',
            summary: 'A duplicate whose existing resource is what the test says',
            tags: ['Test'],
            response: problemResponses([409], {}, {}, { 409: ['duplicate-resource'] }),
          },
        },
        async () => {
          throw new DuplicateResource('A thing with code "X" already exists for your client.', () => lookup());
        },
      );
    },
  });
  ({ token } = await tenantWithToken(t));
  v = await visitTenant(t, { assets: 0 });
});
afterAll(async () => t?.close());

/** The problem's `existing` member, after checking it is a duplicate-resource 409. */
function existingOf(response: TestResponse) {
  expectProblem(response, 409, 'duplicate-resource');
  return response.body.existing as { type: string; id: string } | undefined;
}

const createSite = (json: unknown, key?: string, as = token) =>
  t.http.post('/api/v1/sites', { token: as, json, ...(key ? { headers: { 'idempotency-key': key } } : {}) });

describe('sites', () => {
  it('a create without a key names the site with that siteCode; the detail stays as it was', async () => {
    const body = siteBody();
    const first = (await createSite(body)).body.data;
    const response = await createSite(siteBody({ siteCode: body.siteCode }));
    expect(existingOf(response)).toEqual({ type: 'sites', id: first.id });
    expect(response.body.detail).toBe(
      `A site with siteCode ${JSON.stringify(body.siteCode)} already exists for your client.`,
    );
  });

  it('a create with a new Idempotency-Key names it too', async () => {
    const body = siteBody();
    const first = (await createSite(body, randomUUID())).body.data;
    expect(existingOf(await createSite(siteBody({ siteCode: body.siteCode }), randomUUID()))).toEqual({
      type: 'sites',
      id: first.id,
    });
  });

  it('a patch to a siteCode another site has names that site', async () => {
    const holder = (await createSite(siteBody())).body.data;
    const own = (await createSite(siteBody())).body.data;
    const response = await t.http.patch(`/api/v1/sites/${own.id}`, {
      token,
      json: { siteCode: holder.attributes.siteCode },
    });
    expect(existingOf(response)).toEqual({ type: 'sites', id: holder.id });
  });

  it('concurrent creates of one siteCode, with keys and without: every loser names the winner', async () => {
    const body = siteBody();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) => createSite(body, index % 2 === 0 ? randomUUID() : undefined)),
    );
    const winners = responses.filter((response) => response.status === 201);
    expect(winners).toHaveLength(1);
    for (const response of responses.filter((r) => r.status !== 201))
      expect(existingOf(response)).toEqual({ type: 'sites', id: winners[0]!.body.data.id });
  });

  it("never names another tenant's site: each tenant's duplicate names its own", async () => {
    const other = await tenantWithToken(t);
    const body = siteBody();
    const mine = (await createSite(body)).body.data;
    const theirs = await createSite(body, undefined, other.token);
    expect(theirs.status).toBe(201);
    expect(existingOf(await createSite(body, undefined, other.token))).toEqual({
      type: 'sites',
      id: theirs.body.data.id,
    });
    expect(existingOf(await createSite(body))).toEqual({ type: 'sites', id: mine.id });
  });
});

describe('site visits', () => {
  it('a create names the visit with that clientTicketNumber, with a key and without', async () => {
    const first = await createVisit(t, v, { clientTicketNumber: 'DUP-EXISTING-1' });
    expect(existingOf(await postVisit(t, v, { clientTicketNumber: 'DUP-EXISTING-1' }))).toEqual({
      type: 'site-visits',
      id: first.id,
    });
    const keyed = await t.http.post('/api/v1/site-visits', {
      token: v.fullToken,
      headers: { 'idempotency-key': randomUUID() },
      json: visitBody(v, { clientTicketNumber: 'DUP-EXISTING-1' }),
    });
    expect(existingOf(keyed)).toEqual({ type: 'site-visits', id: first.id });
  });

  it('concurrent creates of one ticket number: the losers name the winner', async () => {
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => postVisit(t, v, { clientTicketNumber: 'DUP-RACE-1' })),
    );
    const winners = responses.filter((response) => response.status === 201);
    expect(winners).toHaveLength(1);
    for (const response of responses.filter((r) => r.status !== 201))
      expect(existingOf(response)).toEqual({ type: 'site-visits', id: winners[0]!.body.data.id });
  });

  it("the operator's create and a client's patch name it too", async () => {
    const first = await createVisit(t, v, { clientTicketNumber: 'DUP-EXISTING-2' });
    expect(existingOf(await operatorCreateVisit(t, v, { clientTicketNumber: 'DUP-EXISTING-2' }))).toEqual({
      type: 'site-visits',
      id: first.id,
    });
    const other = await createVisit(t, v);
    const response = await t.http.patch(`/api/v1/site-visits/${other.id}`, {
      token: v.fullToken,
      json: { clientTicketNumber: 'DUP-EXISTING-2' },
    });
    expect(existingOf(response)).toEqual({ type: 'site-visits', id: first.id });
  });
});

describe("the operator's reference data", () => {
  it('a project id the tenant has is named; an item is named by its id whichever of id and name is taken', async () => {
    const projects = `/admin/v1/tenants/${v.tenantId}/projects`;
    const project = await admin(t, 'POST', projects, { projectId: 'P-DUP', projectName: 'One' });
    expect(project.status).toBe(201);
    expect(existingOf(await admin(t, 'POST', projects, { projectId: 'P-DUP', projectName: 'Two' }))).toEqual({
      type: 'projects',
      id: 'P-DUP',
    });
    const items = `/admin/v1/tenants/${v.tenantId}/items`;
    expect((await admin(t, 'POST', items, { itemId: 77_001, itemName: 'Dup kiosk' })).status).toBe(201);
    expect(existingOf(await admin(t, 'POST', items, { itemId: 77_002, itemName: 'Dup kiosk' }))).toEqual({
      type: 'items',
      id: '77001',
    });
    expect(existingOf(await admin(t, 'POST', items, { itemId: 77_001, itemName: 'Other kiosk' }))).toEqual({
      type: 'items',
      id: '77001',
    });
  });
});

describe('the API reference', () => {
  // An integrator reads the operation's 409 and the Errors section, not only the Problem schema's members.
  it("says where a duplicate is named: the Errors section and each duplicate's 409", async () => {
    const document = (await t.http.get('/api/v1/openapi.json')).body;
    expect(document.info.description).toMatch(
      /409 `duplicate-resource`[\s\S]*names the resource that has it in `existing`/,
    );
    const conflicts: [string, string, string][] = [
      ['/api/v1/sites', 'post', 'site'],
      ['/api/v1/sites/{id}', 'patch', 'site'],
      ['/api/v1/site-visits', 'post', 'visit'],
      ['/api/v1/site-visits/{id}', 'patch', 'visit'],
    ];
    for (const [path, method, noun] of conflicts) {
      expect(document.paths[path][method].responses['409'].description, `${method} ${path}`).toContain(
        `duplicate-resource: \`existing\` names the ${noun} that has it`,
      );
    }
  });
});

describe('an existing resource that cannot be read', () => {
  it('is left out: the problem is answered as it is', async () => {
    lookup = async () => undefined;
    const response = await t.http.get('/api/v1/duplicate-test', { token });
    expect(existingOf(response)).toBeUndefined();
    expect(response.body.detail).toBe('A thing with code "X" already exists for your client.');
  });

  it('is left out when the lookup fails', async () => {
    lookup = async () => {
      throw new Error('connection lost');
    };
    expect(existingOf(await t.http.get('/api/v1/duplicate-test', { token }))).toBeUndefined();
  });

  it('is left out when its id is longer than any id the service gives (the problem does not grow)', async () => {
    lookup = async () => ({ type: 'sites', id: `site_${'x'.repeat(200)}` });
    const response = await t.http.get('/api/v1/duplicate-test', { token });
    expect(existingOf(response)).toBeUndefined();
    lookup = async () => ({ type: 'sites', id: 'site_short' });
    expect(existingOf(await t.http.get('/api/v1/duplicate-test', { token }))).toEqual({
      type: 'sites',
      id: 'site_short',
    });
  });
});

describe.skipIf(!inject('databaseUrl'))('PostgreSQL: a winner that commits while the create waits', () => {
  it('the create waits for the uncommitted site, then names it once it is committed', async () => {
    const { tenantId, token: own } = await tenantWithToken(t);
    const body = siteBody();
    const winnerId = `site_${randomUUID().replaceAll('-', '')}`;
    let commit!: () => void;
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const held = t.database.db.transaction().execute(async (tx: Transaction<Database>) => {
      await tx
        .insertInto('sites')
        .values({
          id: winnerId,
          tenant_id: tenantId,
          site_code: body.siteCode,
          name: body.name,
          address_line1: body.addressLine1,
          city: body.city,
          state_region: body.stateRegion,
          postal_code: body.postalCode,
          country: body.country,
          status: 'Active',
        })
        .execute();
      inserted();
      await new Promise<void>((resolve) => {
        commit = resolve;
      });
    });
    await insertedSignal;
    const loser = createSite(body, undefined, own);
    // The create waits for the uncommitted row's transaction; let go of it once the create is surely waiting.
    await waitForLockWait(t);
    commit();
    await held;
    expect(existingOf(await loser)).toEqual({ type: 'sites', id: winnerId });
  });
});

/** Until a statement of this database waits for a lock (the create's insert, behind the held transaction). */
async function waitForLockWait(app: TestApp): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(app.database.db);
    if (rows[0]!.waiting > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
