/**
 * Addresses under the client's base address. The base may carry a path prefix (`https://host/ss` behind a
 * proxy), so a path is appended to it, as openapi-fetch joins the typed calls' paths: resolving it
 * (`new URL('/api/v1/…', base)`) would replace the prefix with the path. For the same reason an absolute
 * URL given as the path stays under the base (the bearer token goes nowhere else).
 */
export function urlUnder(baseUrl: string, path: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
}
