// The operator API, with the token held in this module's memory only: never in storage or a cookie,
// so reloading the page signs the operator out.
let token;

export function signIn(value) {
  token = value;
}

export function signOut() {
  token = undefined;
}

export function signedIn() {
  return token !== undefined;
}

/** Listeners told when the API refuses the token (it was rotated): the console signs out. */
const onUnauthorized = new Set();
export function whenUnauthorized(listener) {
  onUnauthorized.add(listener);
  return () => onUnauthorized.delete(listener);
}

/** Calls the operator API; answers the `data` member, throws the problem (or a plain error). */
export async function api(method, path, body) {
  const document = await apiDocument(method, path, body);
  return document === null ? null : document.data;
}

/** Calls the operator API; answers the whole document (`data` and `meta`), null for 204; throws the problem. */
export async function apiDocument(method, path, body) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/admin/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  if (response.status === 204) return null;
  const payload = await response
    .json()
    .catch(() => ({ title: `HTTP ${response.status}`, detail: 'The answer was not JSON.' }));
  if (!response.ok) refused(response, payload);
  return payload;
}

/** Throws the problem of a refused call (signing out on 401). */
function refused(response, payload) {
  if (response.status === 401) for (const listener of onUnauthorized) listener();
  throw Object.assign(new Error(payload.detail || payload.title), payload, { status: response.status });
}

/**
 * The name a Content-Disposition gives: the exact one (`filename*`, UTF-8, RFC 8187) when the service sent one,
 * as it does for a name that is not ASCII ("façade.jpg"), else the ASCII `filename`.
 */
function dispositionName(header) {
  const exact = /filename\*=UTF-8''([^;\s]+)/i.exec(header);
  if (exact) {
    try {
      return decodeURIComponent(exact[1]);
    } catch {
      // Not percent-encoding after all: the ASCII name then.
    }
  }
  return /filename="?([^";]+)"?/.exec(header)?.[1];
}

/**
 * Saves a file of the operator API (a visit's return label, a message's attachment) as a download. A plain link
 * cannot carry the token (kept in memory, never in a cookie), so the file is fetched and handed to the browser as
 * a blob.
 */
export async function download(path, fallbackName) {
  const response = await fetch(`/admin/v1${path}`, {
    headers: { authorization: `Bearer ${token}` },
    cache: 'no-store',
  });
  if (!response.ok) refused(response, await response.json().catch(() => ({ title: `HTTP ${response.status}` })));
  const name = dispositionName(response.headers.get('content-disposition') || '') ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function query(params) {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined && value !== null && value !== '');
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries)}`;
}
