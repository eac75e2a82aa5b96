/**
 * Tenant isolation matrix: two tenants with one of everything (site with assets, visit with a return
 * label, message with an attachment, webhook subscription, project, item). In both directions, every
 * client operation that takes an id (from the OpenAPI document) is called with the other tenant's id and
 * token: the answer is 404 and byte-identical (status, media type, body) to the answer for an id that
 * exists nowhere. Lists and their filters show none of the other tenant's rows; creates that name the
 * other tenant's site code, project, item, site assets, visit or Idempotency-Key behave as for unknown
 * ones; and the owner's resources are unchanged afterwards.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { siteBody } from '../helpers/tenants.js';
import { visitBody } from '../helpers/visits.js';
import { localResolver, testWebhookConfig } from '../helpers/webhooks.js';
import { reportFigure } from './lib/figures.js';
import { clientOperations, fillPath } from './lib/operations.js';

interface World extends MessageTenant {
  messageId: string;
  subscriptionId: string;
  idempotencyKey: string;
  ticketNumber: string;
}

let t: TestApp;
let a: World;
let b: World;

async function world(): Promise<World> {
  const m = await messageTenant(t, { assets: 2 });
  const messageId = (await createMessage(t, m)).id;
  const upload = (path: string) =>
    t.http.post(path, {
      token: m.fullToken,
      body: fileForm(pdfBytes()),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
  expect((await upload(`/api/v1/site-visits/${m.visitId}/return-label`)).status).toBe(201);
  expect((await upload(`/api/v1/messages/${messageId}/file-attachment`)).status).toBe(201);
  const subscription = await t.http.post('/api/v1/webhook-subscriptions', {
    token: m.fullToken,
    json: { targetUrl: 'https://localhost:8443/hook', eventTypes: ['ticket.created'], secret: 'a secret of sixteen+' },
  });
  expect(subscription.status, subscription.text).toBe(201);
  const idempotencyKey = `import-row-of-${m.tenantId}`;
  expect(
    (
      await t.http.post('/api/v1/sites', {
        token: m.fullToken,
        json: siteBody(),
        headers: { 'idempotency-key': idempotencyKey },
      })
    ).status,
  ).toBe(201);
  const visit = await t.http.get(`/api/v1/site-visits/${m.visitId}`, { token: m.fullToken });
  return {
    ...m,
    messageId,
    subscriptionId: subscription.body.data.id,
    idempotencyKey,
    ticketNumber: visit.body.data.attributes.clientTicketNumber,
  };
}

beforeAll(async () => {
  t = await startTestApp({ config: { webhook: testWebhookConfig(8443) }, resolver: localResolver });
  a = await world();
  b = await world();
});
afterAll(async () => t?.close());

/** The owner's id for a path's resource, or a well-formed id that exists nowhere. */
function idFor(path: string, owner: World | undefined): string {
  if (path.startsWith('/api/v1/sites/')) return owner ? owner.siteId : newId('site');
  if (path.startsWith('/api/v1/site-visits/') || path.startsWith('/api/v1/sandbox/site-visits/'))
    return owner ? owner.visitId : newId('visit');
  if (path.startsWith('/api/v1/messages/')) return owner ? owner.messageId : newId('msg');
  if (path.startsWith('/api/v1/webhook-subscriptions/')) return owner ? owner.subscriptionId : newId('whsub');
  throw new Error(`no resource known for ${path}`);
}

/** A body the operation accepts, so that the answer is about the id, not the body. */
function requestFor(method: string, path: string): { json?: unknown; body?: Buffer; headers?: Record<string, string> } {
  if (path.endsWith('/return-label') || path.endsWith('/file-attachment')) {
    return method === 'POST' ? { body: fileForm(pdfBytes()), headers: { 'content-type': MULTIPART_CONTENT_TYPE } } : {};
  }
  if (path.endsWith('/simulate')) return { json: { action: 'dispatch' } };
  if (method !== 'PATCH') return {};
  if (path.startsWith('/api/v1/sites/')) return { json: { city: 'Leakville' } };
  if (path.startsWith('/api/v1/site-visits/')) return { json: { description: 'Leaked?' } };
  if (path.startsWith('/api/v1/messages/')) return { json: { messageThread: 'Leaked?' } };
  return { json: { description: 'Leaked?' } };
}

const fingerprint = (response: TestResponse) => `${response.status} ${response.contentType} ${response.text}`;

it('leaks nothing across tenants on any route, in either direction', { timeout: 120_000 }, async () => {
  const operations = clientOperations(t.app).filter((operation) => operation.secured);
  const byId = operations.filter((operation) => operation.path.includes('{'));
  const lists = operations.filter((operation) => operation.method === 'GET' && !operation.path.includes('{'));
  expect(byId.length).toBeGreaterThanOrEqual(10);
  const snapshot = async (owner: World) =>
    Promise.all(
      byId
        .filter((operation) => operation.method === 'GET')
        .map(async (operation) =>
          fingerprint(
            await t.http.get(
              fillPath(operation.path, () => idFor(operation.path, owner)),
              { token: owner.fullToken },
            ),
          ),
        ),
    );
  const before = [await snapshot(a), await snapshot(b)];

  let probes = 0;
  let identical404s = 0;
  const leaks: string[] = [];
  const foreignMs: number[] = [];
  const unknownMs: number[] = [];
  const timed = async (call: () => Promise<TestResponse>, into: number[]) => {
    const started = performance.now();
    const response = await call();
    into.push(performance.now() - started);
    return response;
  };
  for (const [owner, intruder] of [
    [a, b],
    [b, a],
  ] as const) {
    const ownerIds = [
      owner.tenantId,
      owner.siteId,
      owner.visitId,
      owner.messageId,
      owner.subscriptionId,
      owner.siteCode,
      owner.ticketNumber,
      String(owner.projectId),
      owner.itemName,
    ];
    // Every operation on an id: the owner's id answers exactly as an id that exists nowhere.
    // A sandbox webhook listener lives only while its stream does; its isolation is tests/webhooks/listeners.test.ts'.
    for (const operation of byId.filter(
      (candidate) => !candidate.path.startsWith('/api/v1/sandbox/webhook-listeners'),
    )) {
      const call = (owned: World | undefined) => () =>
        t.http.request(
          operation.method,
          fillPath(operation.path, () => idFor(operation.path, owned)),
          { token: intruder.fullToken, ...requestFor(operation.method, operation.path) },
        );
      // Alternate which goes first, so that a route's first call (colder) does not bias the timings.
      const foreignFirst = probes % 2 === 0;
      const first = await timed(call(foreignFirst ? owner : undefined), foreignFirst ? foreignMs : unknownMs);
      const second = await timed(call(foreignFirst ? undefined : owner), foreignFirst ? unknownMs : foreignMs);
      const [foreign, unknown] = foreignFirst ? [first, second] : [second, first];
      probes++;
      if (foreign.status !== 404)
        leaks.push(
          `${operation.operationId} with the other tenant's id: ${foreign.status} ${foreign.text.slice(0, 200)}`,
        );
      else if (fingerprint(foreign) !== fingerprint(unknown))
        leaks.push(`${operation.operationId}: foreign ${fingerprint(foreign)} vs unknown ${fingerprint(unknown)}`);
      else identical404s++;
    }
    // Every list, unfiltered and filtered by the owner's identifiers: none of the owner's rows.
    const queries: Array<[string, Record<string, string>]> = [
      ...lists.map((operation) => {
        const paged = (operation.operation.parameters ?? []).some(
          (parameter: { name: string }) => parameter.name === 'page[size]',
        );
        return [operation.path, paged ? { 'page[size]': '100' } : {}] as [string, Record<string, string>];
      }),
      ['/api/v1/sites', { siteCode: owner.siteCode }],
      ['/api/v1/site-visits', { clientTicketNumber: owner.ticketNumber }],
    ];
    for (const [path, query] of queries) {
      const response = await t.http.get(path, { token: intruder.fullToken, query });
      probes++;
      expect(response.status).toBe(200);
      const seen = ownerIds.filter((id) => response.text.includes(id));
      if (seen.length > 0) leaks.push(`${path}?${new URLSearchParams(query)} shows ${seen.join(', ')}`);
    }
    // Creates naming the owner's things: as if they did not exist.
    const creates: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
      [
        "visit at the owner's site code",
        '/api/v1/site-visits',
        visitBody(intruder, { clientSiteId: owner.siteCode }),
        visitBody(intruder, { clientSiteId: 'NO-SUCH-SITE' }),
      ],
      [
        "visit with the owner's project",
        '/api/v1/site-visits',
        visitBody(intruder, { projectId: owner.projectId }),
        visitBody(intruder, { projectId: 999_999_999 }),
      ],
      [
        "visit with the owner's item",
        '/api/v1/site-visits',
        visitBody(intruder, { itemName: owner.itemName }),
        visitBody(intruder, { itemName: 'No such item' }),
      ],
      [
        "visit with the owner's site assets",
        '/api/v1/site-visits',
        visitBody(intruder, { siteAssetIds: owner.assetIds }),
        visitBody(intruder, { siteAssetIds: [1, 2] }),
      ],
      [
        "message on the owner's visit",
        '/api/v1/messages',
        { siteVisitId: owner.visitId, messageThread: 'Leak?' },
        { siteVisitId: newId('visit'), messageThread: 'Leak?' },
      ],
    ];
    for (const [name, path, foreignBody, unknownBody] of creates) {
      const foreign = await t.http.post(path, { token: intruder.fullToken, json: foreignBody });
      const unknown = await t.http.post(path, { token: intruder.fullToken, json: unknownBody });
      probes++;
      // The detail may echo the value sent (each request's own); the status and problem type may not differ.
      if (foreign.status < 400 || foreign.status !== unknown.status || foreign.body.type !== unknown.body.type) {
        leaks.push(`${name}: ${foreign.status} ${foreign.body.type} vs ${unknown.status} ${unknown.body.type}`);
      } else identical404s += foreign.status === 404 ? 1 : 0;
    }
    // The owner's siteCode, ticket number and Idempotency-Key are free in the intruder's tenant.
    const sameCode = await t.http.post('/api/v1/sites', {
      token: intruder.fullToken,
      json: siteBody({ siteCode: owner.siteCode }),
      headers: { 'idempotency-key': owner.idempotencyKey },
    });
    probes++;
    if (
      sameCode.status !== 201 ||
      sameCode.headers.get('idempotent-replayed') !== null ||
      ownerIds.some((id) => sameCode.text.includes(id) && id !== owner.siteCode)
    ) {
      leaks.push(
        `site with the owner's siteCode and Idempotency-Key: ${sameCode.status} ${sameCode.text.slice(0, 200)}`,
      );
    }
    const sameTicket = await t.http.post('/api/v1/site-visits', {
      token: intruder.fullToken,
      json: visitBody(intruder, { clientTicketNumber: owner.ticketNumber }),
    });
    probes++;
    if (sameTicket.status !== 201)
      leaks.push(`visit with the owner's ticket number: ${sameTicket.status} ${sameTicket.text.slice(0, 200)}`);
  }
  // Nothing the intruders tried changed the owners' resources.
  const after = [await snapshot(a), await snapshot(b)];
  expect(after).toEqual(before);
  expect(leaks).toEqual([]);
  const median = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  reportFigure(
    'isolation',
    `${probes} probes (${byId.length} id routes, ${lists.length} lists + filters, creates naming the other's site, project, item, assets, visit, key; both directions): ` +
      `0 leaks, ${identical404s} foreign-id 404s byte-identical to unknown-id 404s, owners unchanged; median 404 ${median(foreignMs).toFixed(1)} ms foreign vs ${median(unknownMs).toFixed(1)} ms unknown`,
  );
});
