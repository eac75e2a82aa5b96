/**
 * Addresses under the client's base address. The base may carry a path prefix (`https://host/ss` behind a
 * proxy), so a path is appended to it, as openapi-fetch joins the typed calls' paths: resolving it
 * (`new URL('/api/v1/…', base)`) would replace the prefix with the path. For the same reason an absolute
 * URL given as the path stays under the base (the bearer token goes nowhere else).
 */
export function urlUnder(baseUrl: string, path: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
}

/**
 * The base address as given, without trailing slashes, or a TypeError naming the mistake: it must be an
 * absolute http(s) URL, and it must not end in `/api/v1`, which every path already starts with (the request
 * would go to `/api/v1/api/v1/…` and be answered 404).
 */
export function checkedBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`the base address is not an absolute URL: ${String(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`the base address must be an http:// or https:// URL, got ${baseUrl}`);
  if (/\/api\/v1\/*$/.test(url.pathname))
    throw new TypeError(
      `the base address ends in /api/v1, which every path already starts with: give ${baseUrl.replace(/\/api\/v1\/*$/, '')} ` +
        '(the address without /api/v1, as `baseUrl` of the credential packet)',
    );
  return baseUrl.replace(/\/+$/, '');
}
