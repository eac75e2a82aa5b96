/**
 * GET by id reads a resource's row together with the other GETs of the same turn, one statement for all
 * of them (src/db/tenant-row-reads.ts), for sites, site visits and messages alike. Two tenants asking at
 * once, each for its own rows and for the other's, get their own and a 404 for the other's: a batch that
 * read another tenant's row never hands it over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';

let t: TestApp;
let a: MessageTenant;
let b: MessageTenant;
const ids = new Map<MessageTenant, Record<string, string>>();

beforeAll(async () => {
  t = await startTestApp();
  [a, b] = await Promise.all([messageTenant(t), messageTenant(t)]);
  for (const tenant of [a, b]) {
    const message = await createMessage(t, tenant);
    ids.set(tenant, { sites: tenant.siteId, 'site-visits': tenant.visitId, messages: message.id });
  }
});
afterAll(async () => t?.close());

describe.each(['sites', 'site-visits', 'messages'])('GET /api/v1/%s/{id} read in one batch', (collection) => {
  it("answers each tenant its own row and never the other tenant's", async () => {
    const idOf = (tenant: MessageTenant) => ids.get(tenant)![collection]!;
    const get = (tenant: MessageTenant, id: string) =>
      t.http.get(`/api/v1/${collection}/${encodeURIComponent(id)}`, { token: tenant.fullToken });
    // Sent together, so that they are read in the same turn of the event loop.
    const [own, other, ownB, otherB] = await Promise.all([
      get(a, idOf(a)),
      get(a, idOf(b)),
      get(b, idOf(b)),
      get(b, idOf(a)),
    ]);
    expect([own.status, other.status, ownB.status, otherB.status]).toEqual([200, 404, 200, 404]);
    expect(own.body.data.id).toBe(idOf(a));
    expect(ownB.body.data.id).toBe(idOf(b));
  });
});
