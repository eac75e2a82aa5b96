/**
 * Unknown query parameters on the operator API (adversarial probe): every GET of the operator document is a
 * 422 naming a parameter it does not take, whether or not it takes any (the product decisions: "unknown query
 * parameters: 422 on every list"). The routes are read from the document, so a route added later is walked
 * too and cannot forget to declare its query.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorOpenApiDocument } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { admin, createTenant } from '../helpers/tenants.js';

let t: TestApp;
let tenantId: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ tenantId } = await createTenant(t));
});
afterAll(async () => t?.close());

/** A path of the template: the tenant's id for {tenantId}, any id for the others (validation comes first). */
function pathOf(template: string): string {
  return template.replace(/\{([^}]+)\}/g, (_match, name: string) => (name === 'tenantId' ? tenantId : `${name}_x`));
}

function operatorGets(): string[] {
  const document = operatorOpenApiDocument(t.app) as unknown as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths)
    .filter(([, item]) => item.get !== undefined)
    .map(([template]) => template);
}

describe('unknown query parameters on the operator API', () => {
  it('the walk covers every operator GET, those without parameters too', () => {
    expect(operatorGets()).toEqual(
      expect.arrayContaining([
        '/admin/v1/tenants',
        '/admin/v1/tenants/{tenantId}',
        '/admin/v1/tenants/{tenantId}/credentials',
        '/admin/v1/tenants/{tenantId}/projects',
        '/admin/v1/tenants/{tenantId}/items',
        '/admin/v1/tenants/{tenantId}/webhook-subscriptions',
        '/admin/v1/tenants/{tenantId}/site-assets',
        '/admin/v1/tenants/{tenantId}/site-visits',
        '/admin/v1/site-visits/{visitId}',
        '/admin/v1/deliveries',
        '/admin/v1/deliveries/{deliveryId}',
      ]),
    );
  });

  it('every operator GET answers ?bogus=1 with 422 naming bogus', async () => {
    for (const template of operatorGets()) {
      const response = await admin(t, 'GET', `${pathOf(template)}?bogus=1`);
      const errors = expectProblem(response, 422, 'validation-error');
      expect(errors.bogus, `${template}: ${response.text}`).toEqual(['is not a known field']);
    }
  });

  it('the parameterless ones still answer without a query, and with an empty one', async () => {
    for (const path of [`/admin/v1/tenants`, `/admin/v1/tenants/${tenantId}`, `/admin/v1/tenants/${tenantId}/items`]) {
      expect((await admin(t, 'GET', path)).status, path).toBe(200);
      expect((await admin(t, 'GET', `${path}?`)).status, `${path}?`).toBe(200);
    }
  });
});
