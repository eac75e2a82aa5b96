/**
 * Addresses under the client's base address. The base may carry a path prefix (`https://host/ss` behind a
 * proxy), so a path is appended to it, as openapi-fetch joins the typed calls' paths: resolving it
 * (`new URL('/api/v1/…', base)`) would replace the prefix with the path. For the same reason an absolute
 * URL given as the path stays under the base (the bearer token goes nowhere else); getUrl takes one that lies
 * under the base as it is.
 */
export function urlUnder(baseUrl: string, path: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
}

/** An absolute URL (`https://…`) rather than a path. */
export const ABSOLUTE_URL = /^[a-z][a-z\d+.-]*:\/\//i;

/**
 * The address of a GET of `target` (`getRaw`, `svc get`): a path under the base as urlUnder appends it, or an
 * absolute URL as it is when it lies under the base: the `url` of a return label or an attachment, which the
 * service builds on its own address, was appended as a path and answered 404 at `/http://…`. An absolute URL
 * elsewhere is a TypeError, nothing sent: the bearer token goes to the base address only.
 */
export function getUrl(baseUrl: string, target: string): URL {
  if (!ABSOLUTE_URL.test(target)) return urlUnder(baseUrl, target);
  const url = new URL(target);
  const base = urlUnder(baseUrl, '');
  if (url.origin === base.origin && url.pathname.startsWith(base.pathname)) return url;
  throw new TypeError(
    `${target} is not under the client's base address ${baseUrl}, the only address its token is sent to: ` +
      'give its path (/api/v1/…), or a base address the service knows itself by (PUBLIC_BASE_URL)',
  );
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
