/**
 * Unknown query parameters on the client API: every GET of the client document is a 422 naming a parameter
 * it does not take, whether or not it takes any (the product decisions: unknown query parameters are 422; the
 * GETs by id and the downloads ignored them until session 16). The routes are read from the document, so a
 * route added later is walked too. tests/admin/unknown-query.test.ts walks the operator document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await tenantWithToken(t));
});
afterAll(async () => t?.close());

function clientGets(): string[] {
  const document = clientOpenApiDocument(t.app) as unknown as { paths: Record<string, Record<string, unknown>> };
  return (
    Object.entries(document.paths)
      // The document itself is a static file, not a resource read: its query is not looked at.
      .filter(([template, item]) => item.get !== undefined && template.startsWith('/api/v1/'))
      .filter(([template]) => !template.endsWith('/openapi.json'))
      .map(([template]) => template)
  );
}

describe('unknown query parameters on the client API', () => {
  it('the walk covers the lists, the GETs by id and the downloads', () => {
    expect(clientGets()).toEqual(
      expect.arrayContaining([
        '/api/v1/sites',
        '/api/v1/sites/{id}',
        '/api/v1/site-visits/{id}',
        '/api/v1/site-visits/{id}/return-label',
        '/api/v1/messages/{id}',
        '/api/v1/messages/{id}/file-attachment',
        '/api/v1/webhook-subscriptions',
      ]),
    );
  });

  it('every client GET answers ?bogus=1 with 422 naming bogus', async () => {
    for (const template of clientGets()) {
      const path = template.replace(/\{([^}]+)\}/g, (_match, name: string) => `${name}_x`);
      const response = await t.http.get(`${path}?bogus=1`, { token });
      const errors = expectProblem(response, 422, 'validation-error');
      expect(errors.bogus, `${template}: ${response.text}`).toEqual(['is not a known field']);
    }
  });
});
