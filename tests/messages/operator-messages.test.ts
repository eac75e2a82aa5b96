/**
 * The operator reads the messages a client sent about a visit: the visit's messages over the operator API, as the
 * client API represents them, and each attachment's latest version (the operator token does not open the client
 * API's download, and the operator API had neither).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, type MessageTenant, uploadAttachment } from '../helpers/messages.js';
import { pdfBytes, pngBytes } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';
import { createVisit } from '../helpers/visits.js';

let t: TestApp;
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

const UNKNOWN_VISIT = 'visit_0000000000000000000000000';
const UNKNOWN_MESSAGE = 'msg_00000000000000000000000000';

function messagesPath(visitId: string, query = '') {
  return `/admin/v1/site-visits/${visitId}/messages${query}`;
}

function attachmentPath(messageId: string) {
  return `/admin/v1/messages/${messageId}/file-attachment`;
}

async function fetchAs(path: string, token: string) {
  const response = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** A fresh visit of the tenant with its own messages (the file's other tests add theirs to m.visitId). */
async function freshVisit() {
  return { ...m, visitId: (await createVisit(t, m)).id };
}

describe('GET /admin/v1/site-visits/{visitId}/messages', () => {
  it("lists the visit's messages oldest first, as the client API shows them, the attachment's url the operator's", async () => {
    const v = await freshVisit();
    const first = await createMessage(t, v, { type: 'Floor Plan', urgency: 'High', buyer: true });
    const photo = pngBytes(3000);
    expect((await uploadAttachment(t, v.token, first.id, photo, 'floor-plan.png', 'image/png')).status).toBe(201);
    const second = await createMessage(t, v, { messageThread: 'Second note\nwith a second line.', status: 'Closed' });
    // Another visit's message, of the same tenant: not listed.
    await createMessage(t, m);

    const listed = await admin(t, 'GET', messagesPath(v.visitId));
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((message: any) => message.id)).toEqual([first.id, second.id]);

    // Each is the client API's representation but for the download address.
    for (const message of listed.body.data) {
      const client = (await t.http.get(`/api/v1/messages/${message.id}`, { token: v.token })).body.data;
      const { fileAttachment, ...rest } = message.attributes;
      const { fileAttachment: clientAttachment, ...clientRest } = client.attributes;
      expect({ ...message, attributes: rest }).toEqual({ ...client, attributes: clientRest });
      expect(fileAttachment).toEqual(
        clientAttachment === null
          ? null
          : { ...clientAttachment, url: `${t.config.publicBaseUrl}${attachmentPath(message.id)}` },
      );
    }
    expect(listed.body.data[1].attributes).toMatchObject({
      messageThread: 'Second note\nwith a second line.',
      status: 'Closed',
      fileAttachment: null,
    });
    expect(listed.body.data[0].attributes.fileAttachment.versions).toEqual([
      expect.objectContaining({ version: 1, fileName: 'floor-plan.png', contentType: 'image/png', sizeBytes: 3000 }),
    ]);
  });

  it('pages with limit and after (the last id of the page before); a page shorter than limit is the last', async () => {
    const v = await freshVisit();
    const ids: string[] = [];
    for (let index = 0; index < 5; index++)
      ids.push((await createMessage(t, v, { messageThread: `note ${index}` })).id);

    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const query = `?limit=2${after === undefined ? '' : `&after=${after}`}`;
      const page = await admin(t, 'GET', messagesPath(v.visitId, query));
      expect(page.status, page.text).toBe(200);
      pages.push(page.body.data.map((message: any) => message.id));
      if (page.body.data.length < 2) break;
      after = page.body.data.at(-1).id;
    }
    expect(pages).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
    // The default page holds them all.
    expect((await admin(t, 'GET', messagesPath(v.visitId))).body.data).toHaveLength(5);
  });

  it('is an empty list for a visit without messages, 404 for an unknown visit', async () => {
    const v = await freshVisit();
    const empty = await admin(t, 'GET', messagesPath(v.visitId));
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: [] });
    const unknown = await admin(t, 'GET', messagesPath(UNKNOWN_VISIT));
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/Site visit/);
  });

  it("is 422 for an after of another visit's message, an unknown one, a limit out of range or an unknown parameter", async () => {
    const v = await freshVisit();
    const other = await createMessage(t, m);
    for (const query of [
      `?after=${other.id}`,
      `?after=${UNKNOWN_MESSAGE}`,
      '?limit=0',
      '?limit=101',
      '?page[size]=2',
    ]) {
      const refused = await admin(t, 'GET', messagesPath(v.visitId, query));
      expect(refused.status, query).toBe(422);
    }
    const foreign = await admin(t, 'GET', messagesPath(v.visitId, `?after=${other.id}`));
    expect(foreign.body.errors).toEqual({ after: ['names no message of this visit'] });
  });

  it('answers the operator token only: a client token is 401', async () => {
    const response = await t.http.get(messagesPath(m.visitId), { token: m.fullToken });
    expect(response.status).toBe(401);
    expect((await t.http.get(messagesPath(m.visitId))).status).toBe(401);
  });
});

describe('GET /admin/v1/messages/{messageId}/file-attachment', () => {
  it("is the operator view's fileAttachment.url, and answers the latest version with the client download's headers", async () => {
    const v = await freshVisit();
    const message = await createMessage(t, v);
    const first = pdfBytes(2500);
    first.write('first-version', 20, 'latin1');
    const latest = pdfBytes(4000);
    latest.write('latest-version', 20, 'latin1');
    expect((await uploadAttachment(t, v.token, message.id, first, 'site report.pdf')).status).toBe(201);
    expect((await uploadAttachment(t, v.token, message.id, latest, 'Site report (rev 2).pdf')).status).toBe(201);

    const [seen] = (await admin(t, 'GET', messagesPath(v.visitId))).body.data;
    const url: string = seen.attributes.fileAttachment.url;
    expect(url).toBe(`${t.config.publicBaseUrl}${attachmentPath(message.id)}`);

    const path = url.replace(t.config.publicBaseUrl, '');
    const { response, bytes } = await fetchAs(path, t.adminToken);
    const client = await fetchAs(`/api/v1/messages/${message.id}/file-attachment`, v.token);
    expect(response.status).toBe(200);
    expect(bytes.equals(latest)).toBe(true);
    for (const header of ['content-type', 'content-length', 'content-disposition', 'x-content-type-options'])
      expect(response.headers.get(header), header).toBe(client.response.headers.get(header));
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="Site report (rev 2).pdf"');
    // The operator's answers are never stored (every operator answer: no-store).
    expect(response.headers.get('cache-control')).toBe('no-store');
    // And the download is as documented (the contract hook checks the status, type and headers).
    expect((await admin(t, 'GET', path)).status).toBe(200);
    const head = await admin(t, 'HEAD', path);
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(latest.length));
    expect(head.text).toBe('');
  });

  it('is 404 for a message without an attachment and for an unknown message; a client token is 401', async () => {
    const message = await createMessage(t, m);
    const none = await admin(t, 'GET', attachmentPath(message.id));
    expect(none.status).toBe(404);
    expect(none.body.detail).toMatch(/nothing uploaded yet/);
    const unknown = await admin(t, 'GET', attachmentPath(UNKNOWN_MESSAGE));
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/Message/);

    const attached = await createMessage(t, m);
    expect((await uploadAttachment(t, m.token, attached.id, pdfBytes(1000))).status).toBe(201);
    expect((await fetchAs(attachmentPath(attached.id), m.fullToken)).response.status).toBe(401);
  });
});
