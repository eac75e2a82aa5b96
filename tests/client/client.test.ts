/**
 * The typed client against the real server: tokens (cache, renewal, the 401 rule), SPEC's retry rules by
 * kind of request through a proxy that loses answers (a lost create answer is retried under the same key and
 * replayed; a lost PATCH or upload is not repeated), pagination, lookups, typed problems and uploads. The
 * retry rules' statuses and waits: retry-rules.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ApiError,
  CredentialsError,
  type FetchLike,
  type SiteServicesClient,
  type SiteVisitCreate,
  UncertainResultError,
} from '@site-services/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, startDroppingProxy } from '../helpers/client.js';
import { recordingFetch } from '../helpers/client-fakes.js';
import { pdfBytes, pngBytes } from '../helpers/multipart.js';
import { createTenant, siteBody, type TestTenant } from '../helpers/tenants.js';
import { visitBody as untypedVisitBody, visitTenant } from '../helpers/visits.js';

let t: TestApp;
let dir: string;

const visitBody = (...args: Parameters<typeof untypedVisitBody>) => untypedVisitBody(...args) as SiteVisitCreate;

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-client-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const TOKEN = 'POST /api/v1/oauth/token';

describe('tokens', () => {
  it('fetches a token once, reuses it, and renews it shortly before it expires by the client clock', async () => {
    const tenant = await createTenant(t);
    let now = Date.now();
    const recorder = recordingFetch();
    const client = clientFor(t, tenant, { fetch: recorder.fetch, runtime: { now: () => now } });
    await client.sites.findBySiteCode('none');
    await client.sites.findBySiteCode('none');
    expect(recorder.paths().filter((entry) => entry === TOKEN)).toHaveLength(1);
    // TOKEN_TTL_SECONDS is 3600: renewed a minute early, not before.
    now += 3_540_000 - 1_000;
    await client.sites.findBySiteCode('none');
    expect(recorder.paths().filter((entry) => entry === TOKEN)).toHaveLength(1);
    now += 2_000;
    await client.sites.findBySiteCode('none');
    expect(recorder.paths().filter((entry) => entry === TOKEN)).toHaveLength(2);
    const bearers = recorder.requests
      .filter((request) => request.method === 'GET')
      .map((request) => request.headers.get('authorization'));
    expect(new Set(bearers).size).toBe(2);
  });

  it('after a 401 fetches a fresh token once and repeats the request (here a PATCH: nothing ran)', async () => {
    const tenant = await createTenant(t);
    const site = await clientFor(t, tenant).sites.create(siteBody());
    // The service refuses the first PATCH's token (as after a key rotation): a real 401.
    const recorder = recordingFetch();
    let spoiled = false;
    const spoiling: FetchLike = (request) => {
      if (request.method === 'PATCH' && !spoiled) {
        spoiled = true;
        const headers = new Headers(request.headers);
        headers.set('authorization', 'Bearer not-a-token');
        return recorder.fetch(new Request(request, { headers }));
      }
      return recorder.fetch(request);
    };
    const client = clientFor(t, tenant, { fetch: spoiling });
    const updated = await client.sites.update(site.id, { city: 'Shelbyville' });
    expect(updated.attributes.city).toBe('Shelbyville');
    expect(recorder.paths()).toEqual([
      TOKEN,
      `PATCH /api/v1/sites/${site.id}`,
      TOKEN,
      `PATCH /api/v1/sites/${site.id}`,
    ]);
  });

  it('a second 401 right after a fresh token, or a 401 from the token endpoint, is a credentials error', async () => {
    const tenant = await createTenant(t);
    const recorder = recordingFetch();
    const alwaysSpoiled: FetchLike = (request) => {
      const headers = new Headers(request.headers);
      if (headers.has('authorization')) headers.set('authorization', 'Bearer not-a-token');
      return recorder.fetch(new Request(request, { headers }));
    };
    const error = await clientFor(t, tenant, { fetch: alwaysSpoiled })
      .sites.get('site_x')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CredentialsError);
    expect((error as CredentialsError).problem?.status).toBe(401);
    expect(recorder.paths()).toEqual([TOKEN, 'GET /api/v1/sites/site_x', TOKEN, 'GET /api/v1/sites/site_x']);

    const wrong = recordingFetch();
    const refused = await clientFor(t, { ...tenant, clientSecret: 'secret_wrong' }, { fetch: wrong.fetch })
      .sites.get('site_x')
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(CredentialsError);
    expect((refused as Error).message).toContain('401 invalid_client');
    expect(wrong.paths()).toEqual([TOKEN]);
  });
});

describe('retries through a proxy that cuts the connection after the service answered', () => {
  it('a create is repeated with the same Idempotency-Key and the same body, and the service replays it', async () => {
    const tenant = await createTenant(t);
    const proxy = await startDroppingProxy(
      t.baseUrl,
      (request) => request.method === 'POST' && request.path === '/api/v1/sites' && !dropped++,
    );
    let dropped = 0;
    try {
      const client = createClientVia(proxy.baseUrl, tenant);
      const body = siteBody();
      const created = await client.sites.createWithDetails(body);
      expect(created.replayed).toBe(true);
      const posts = proxy.requests.filter((request) => request.method === 'POST' && request.path === '/api/v1/sites');
      expect(posts.map((request) => [request.status, request.dropped])).toEqual([
        [201, true],
        [201, false],
      ]);
      expect(posts[0]!.headers['idempotency-key']).toBe(created.idempotencyKey);
      expect(posts[1]!.headers['idempotency-key']).toBe(created.idempotencyKey);
      expect(posts[1]!.body.equals(posts[0]!.body)).toBe(true);
      const sites = [];
      for await (const site of client.sites.list({ siteCode: body.siteCode })) sites.push(site);
      expect(sites.map((site) => site.id)).toEqual([created.resource.id]);
    } finally {
      await proxy.close();
    }
  });

  it('a PATCH is not repeated: the uncertain result says to read the resource, which did change', async () => {
    const tenant = await createTenant(t);
    const site = await clientFor(t, tenant).sites.create(siteBody());
    const proxy = await startDroppingProxy(t.baseUrl, (request) => request.method === 'PATCH');
    try {
      const client = createClientVia(proxy.baseUrl, tenant);
      const error = await client.sites
        .update(site.id, { city: 'Capital City' }, { ifMatch: site.meta.etag })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UncertainResultError);
      expect((error as Error).message).toContain('read the current state before repeating this write');
      expect(proxy.requests.filter((request) => request.method === 'PATCH')).toHaveLength(1);
      const current = await client.sites.get(site.id);
      expect(current.meta.version).toBe(2);
      expect(current.attributes.city).toBe('Capital City');
    } finally {
      await proxy.close();
    }
  });

  it('uploads and webhook-subscription writes are not repeated either', async () => {
    const v = await visitTenant(t, { assets: 0 });
    const visit = await clientFor(t, v).siteVisits.create(visitBody(v));
    const proxy = await startDroppingProxy(
      t.baseUrl,
      (request) => request.method !== 'GET' && !request.path.endsWith('/oauth/token'),
    );
    try {
      const client = createClientVia(proxy.baseUrl, v);
      await expect(client.siteVisits.uploadReturnLabel(visit.id, pdfBytes())).rejects.toBeInstanceOf(
        UncertainResultError,
      );
      await expect(
        client.webhookSubscriptions.create({
          targetUrl: 'https://hooks.example.com/x',
          eventTypes: ['ticket.created'],
          secret: 'a-secret-of-enough-length',
        }),
      ).rejects.toBeInstanceOf(UncertainResultError);
      expect(
        proxy.requests
          .filter((request) => request.method === 'POST' && !request.path.endsWith('/oauth/token'))
          .map((request) => request.status),
      ).toEqual([201, 422]);
    } finally {
      await proxy.close();
    }
  });
});

function createClientVia(baseUrl: string, tenant: Pick<TestTenant, 'clientId' | 'clientSecret'>): SiteServicesClient {
  return clientFor({ ...t, baseUrl }, tenant);
}

describe('lists, lookups and problems', () => {
  it('iterates a cursor list page by page, oldest first', async () => {
    const tenant = await createTenant(t);
    const client = clientFor(t, tenant);
    const codes: string[] = [];
    for (let index = 0; index < 7; index++) codes.push((await client.sites.create(siteBody())).attributes.siteCode);
    const pages = [];
    for await (const page of client.sites.pages({ 'page[size]': 3 })) pages.push(page);
    expect(pages.map((page) => [page.data.length, page.meta.pageSize, page.meta.nextCursor !== undefined])).toEqual([
      [3, 3, true],
      [3, 3, true],
      [1, 3, false],
    ]);
    const listed = [];
    for await (const site of client.sites.list({ 'page[size]': 2 })) listed.push(site.attributes.siteCode);
    expect(listed).toEqual(codes);
  });

  it('looks sites up by siteCode, uniqueID and uniqueID2, and a visit by its ticket number', async () => {
    const v = await visitTenant(t, { assets: 0 });
    const client = clientFor(t, v);
    const site = await client.sites.create(siteBody({ uniqueID: `U1-${v.tenantId}`, uniqueID2: `U2-${v.tenantId}` }));
    expect((await client.sites.findBySiteCode(site.attributes.siteCode))?.id).toBe(site.id);
    expect((await client.sites.findByUniqueID(`U1-${v.tenantId}`))?.id).toBe(site.id);
    expect((await client.sites.findByUniqueID2(`U2-${v.tenantId}`))?.id).toBe(site.id);
    expect(await client.sites.findByUniqueID('nobody')).toBeUndefined();
    const visit = await client.siteVisits.create(visitBody(v, { clientTicketNumber: `T-${v.tenantId}` }));
    expect((await client.siteVisits.findByClientTicketNumber(`T-${v.tenantId}`))?.id).toBe(visit.id);
    expect(await client.siteVisits.findByClientTicketNumber('T-none')).toBeUndefined();
  });

  it("lists one visit's messages, page by page", async () => {
    const v = await visitTenant(t, { assets: 0 });
    const client = clientFor(t, v);
    const [visit, other] = [await client.siteVisits.create(visitBody(v)), await client.siteVisits.create(visitBody(v))];
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      ids.push((await client.messages.create({ siteVisitId: visit.id, messageThread: `note ${index}` })).id);
      await client.messages.create({ siteVisitId: other.id, messageThread: 'elsewhere' });
    }
    const listed: string[] = [];
    for await (const message of client.messages.list({ siteVisitId: visit.id, 'page[size]': 2 }))
      listed.push(message.id);
    expect(listed).toEqual(ids);
  });

  it('throws ApiError with the problem: slug, status and field errors', async () => {
    const tenant = await createTenant(t);
    const client = clientFor(t, tenant);
    const invalid = await client.sites
      .create({ ...siteBody(), postalCode: undefined as never, extra: 1 } as never)
      .catch((caught: unknown) => caught);
    expect(invalid).toBeInstanceOf(ApiError);
    expect(invalid).toMatchObject({
      status: 422,
      slug: 'validation-error',
      fieldErrors: { postalCode: ['is required'], extra: ['is not a known field'] },
    });
    const site = await client.sites.create(siteBody());
    // A duplicate names the site that has the siteCode, as `existing` and in the message.
    const duplicate = client.sites.create(siteBody({ siteCode: site.attributes.siteCode }));
    await expect(duplicate).rejects.toMatchObject({
      status: 409,
      slug: 'duplicate-resource',
      existing: { type: 'sites', id: site.id },
    });
    await expect(duplicate).rejects.toThrow(`(existing: ${site.id})`);
    await expect(client.sites.get('site_unknown')).rejects.toMatchObject({ status: 404, slug: 'not-found' });
    await expect(client.sites.update(site.id, { city: 'X' }, { ifMatch: '"7"' })).rejects.toMatchObject({
      status: 409,
      slug: 'version-conflict',
    });
  });
});

describe('uploads', () => {
  it('uploads a return label from a Buffer and from a path, and a message attachment', async () => {
    const v = await visitTenant(t, { assets: 0 });
    const client = clientFor(t, v);
    const visit = await client.siteVisits.create(visitBody(v));
    const first = await client.siteVisits.uploadReturnLabel(visit.id, pdfBytes(3000));
    expect(first.siteVisitId).toBe(visit.id);
    expect(first.returnLabel.versions).toEqual([
      expect.objectContaining({
        version: 1,
        fileName: 'return-label.pdf',
        contentType: 'application/pdf',
        sizeBytes: 3000,
      }),
    ]);
    const file = path.join(dir, 'label-2.pdf');
    writeFileSync(file, pdfBytes(4000));
    const second = await client.siteVisits.uploadReturnLabel(visit.id, file);
    expect(
      second.returnLabel.versions.map((version) => [version.version, version.fileName, version.sizeBytes]),
    ).toEqual([
      [1, 'return-label.pdf', 3000],
      [2, 'label-2.pdf', 4000],
    ]);

    const message = await client.messages.create({ siteVisitId: visit.id, messageThread: 'See the photo' });
    const attached = await client.messages.uploadAttachment(message.id, pngBytes(1500), { fileName: 'photo.png' });
    expect(attached).toMatchObject({
      messageId: message.id,
      fileAttachment: { versions: [expect.objectContaining({ fileName: 'photo.png', contentType: 'image/png' })] },
    });
    await expect(client.messages.uploadAttachment(message.id, Buffer.alloc(0))).rejects.toMatchObject({ status: 422 });
  });
});
