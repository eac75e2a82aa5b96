/**
 * Concurrency against the real server: two API processes (WEB_CONCURRENCY=2) on one PostgreSQL.
 * 50 concurrent PATCHes holding the same If-Match: exactly one succeeds and 49 are 409 version-conflict
 * (the conditional update checks the version in the UPDATE itself, not only before it). 50 concurrent
 * creates with one Idempotency-Key: exactly one site exists afterwards, and every 201 names it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problems.js';
import { siteBody } from '../helpers/tenants.js';
import { reportFigure, scaled } from './lib/figures.js';
import { type FaultStage, faultStage } from './lib/service.js';

const WRITERS = 50;
const ROUNDS = scaled(3, 10);

let stage: FaultStage;
let token: string;
beforeAll(async () => {
  stage = await faultStage('concurrency');
  await stage.startApi({ WEB_CONCURRENCY: '2' });
  token = (await stage.tenant()).token;
});
afterAll(async () => stage?.close());

it(`${ROUNDS} rounds of ${WRITERS} PATCHes with one If-Match and ${WRITERS} creates with one Idempotency-Key`, async () => {
  const http = stage.operator.http;
  let patchWinners = 0;
  let conflicts = 0;
  let createdSites = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const created = await http.post('/api/v1/sites', { token, json: siteBody() });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const patches = await Promise.all(
      Array.from({ length: WRITERS }, (_, index) =>
        http.patch(`/api/v1/sites/${id}`, { token, json: { name: `Writer ${index}` }, headers: { 'if-match': '"1"' } }),
      ),
    );
    const winners = patches.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    for (const response of patches.filter((each) => each.status !== 200))
      expectProblem(response, 409, 'version-conflict');
    patchWinners += winners.length;
    conflicts += patches.length - winners.length;
    const read = await http.get(`/api/v1/sites/${id}`, { token });
    expect(read.body.data.meta.version).toBe(2);
    expect(read.body.data.attributes.name).toBe(winners[0]!.body.data.attributes.name);

    const body = siteBody();
    const key = `rel-${randomUUID()}`;
    const creates = await Promise.all(
      Array.from({ length: WRITERS }, () =>
        http.post('/api/v1/sites', { token, json: body, headers: { 'idempotency-key': key } }),
      ),
    );
    for (const response of creates) {
      if (response.status === 409) expectProblem(response, 409, 'idempotency-pending');
      else expect(response.status, response.text).toBe(201);
    }
    const ids = new Set(creates.filter((response) => response.status === 201).map((response) => response.body.data.id));
    const listed = await http.get('/api/v1/sites', { token, query: { siteCode: body.siteCode } });
    expect(listed.body.data).toHaveLength(1);
    expect([...ids]).toEqual([listed.body.data[0].id]);
    createdSites += listed.body.data.length;
  }
  reportFigure(
    'concurrency',
    `${patchWinners}/${ROUNDS} If-Match rounds with exactly 1 winner, ${conflicts}/${ROUNDS * (WRITERS - 1)} version-conflict; ` +
      `${createdSites} resource(s) from ${ROUNDS}×${WRITERS} creates under one Idempotency-Key each (2 API processes)`,
  );
});
