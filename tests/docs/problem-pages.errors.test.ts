import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('problem type pages, errors', () => {
  it.for(['no-such-problem', 'constructor', '__proto__', 'NOT-FOUND'])(
    'an unknown slug (%s) is a 404 problem',
    async (slug) => {
      const response = await t.http.get(`/problems/${slug}`);
      expect(response.status).toBe(404);
      expect(response.contentType).toBe('application/problem+json; charset=utf-8');
      expect(response.body).toMatchObject({
        type: `${t.config.problemBaseUrl}/not-found`,
        status: 404,
        title: 'Not found',
      });
    },
  );
});
