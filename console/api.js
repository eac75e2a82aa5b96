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
  if (!response.ok) {
    if (response.status === 401) for (const listener of onUnauthorized) listener();
    throw Object.assign(new Error(payload.detail || payload.title), payload, { status: response.status });
  }
  return payload.data;
}

export function query(params) {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined && value !== null && value !== '');
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries)}`;
}
