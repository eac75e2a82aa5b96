/**
 * Creates sent at once: on PostgreSQL the creates of one turn commit together (src/db/turn-batches.ts), and
 * each request still gets exactly the answer it would get alone: its own 201, the duplicate's 409, the
 * replay of its key. On PGlite the same requests simply run one after another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const create = (token: string, json: unknown, key: string) =>
  t.http.post('/api/v1/sites', { token, json, headers: { 'idempotency-key': key } });

async function sitesWithCode(token: string, siteCode: string): Promise<string[]> {
  const response = await t.http.get('/api/v1/sites', { token, query: { siteCode } });
  return response.body.data.map((site: { id: string }) => site.id);
}

describe('site creates sent at once', () => {
  it('each is created, answered with its own site, and replayed by its own key', async () => {
    const [a, b] = await Promise.all([tenantWithToken(t), tenantWithToken(t)]);
    const requests = Array.from({ length: 12 }, (_, index) => ({
      token: index % 2 === 0 ? a.token : b.token,
      body: siteBody(),
      key: `batch-${index}`,
    }));
    const created = await Promise.all(requests.map((request) => create(request.token, request.body, request.key)));
    expect(created.map((response) => response.status)).toEqual(requests.map(() => 201));
    created.forEach((response, index) => {
      expect(response.body.data.attributes.siteCode).toBe(requests[index]!.body.siteCode);
      expect(response.body.data.attributes.clientId).toBe(index % 2 === 0 ? a.tenantId : b.tenantId);
    });
    const replays = await Promise.all(requests.map((request) => create(request.token, request.body, request.key)));
    replays.forEach((replay, index) => {
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(created[index]!.body);
    });
    for (const [index, request] of requests.entries()) {
      expect(await sitesWithCode(request.token, request.body.siteCode)).toEqual([created[index]!.body.data.id]);
    }
  });

  it('of two with the same siteCode, one is created and the other is a duplicate', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    const answers = await Promise.all([create(token, body, 'first'), create(token, body, 'second')]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    const refused = answers.find((answer) => answer.status === 409)!;
    expect(refused.body.type).toMatch(/duplicate-resource$/);
    expect(await sitesWithCode(token, body.siteCode)).toHaveLength(1);
  });

  it('of two with the same key and body, one creates and the other replays it or is told it is pending', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    const answers = await Promise.all([create(token, body, 'same'), create(token, body, 'same')]);
    const fresh = answers.filter((answer) => answer.status === 201 && !answer.headers.get('idempotent-replayed'));
    expect(fresh).toHaveLength(1);
    for (const other of answers.filter((answer) => answer !== fresh[0])) {
      if (other.status === 201) expect(other.body).toEqual(fresh[0]!.body);
      else expect(other.body.type).toMatch(/idempotency-pending$/);
    }
    expect(await sitesWithCode(token, body.siteCode)).toEqual([fresh[0]!.body.data.id]);
  });
});
