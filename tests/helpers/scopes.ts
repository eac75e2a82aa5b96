/** The authentication cases every protected client route shares: no token is 401, a token lacking its scope 403. */
import { describe, expect, it } from 'vitest';
import type { TestApp } from './app.js';
import { type TestTenant, tokenFor } from './tenants.js';

export interface ProtectedRoute {
  method: string;
  /** The route as documented, for the test's name. */
  route: string;
  path: () => string;
  scope: string;
}

/**
 * Declares the cases for each route: without a bearer token 401 `unauthorized`; with a token of the
 * tenant carrying every scope but the route's own (of site-visits and sites), 403 naming that scope.
 */
export function describeAuthentication(app: () => TestApp, tenant: () => TestTenant, routes: ProtectedRoute[]): void {
  const send = (method: string, path: string, token?: string) =>
    app().http.request(method, path, { ...(token ? { token } : {}), ...(method === 'GET' ? {} : { json: {} }) });

  describe('authentication and scopes', () => {
    it.each(routes)('$method $route needs a bearer token', async ({ method, path }) => {
      const response = await send(method, path());
      expect(response.status).toBe(401);
      expect(response.body.type).toMatch(/unauthorized$/);
    });

    it.each(routes)('$method $route needs $scope', async ({ method, path, scope }) => {
      const others = ['site-visits:read', 'site-visits:write', 'sites:read', 'sites:write'].filter(
        (candidate) => candidate !== scope,
      );
      const response = await send(method, path(), await tokenFor(app(), tenant(), others.join(' ')));
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toContain(scope);
    });
  });
}
