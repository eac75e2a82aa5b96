/**
 * Configuration is read from the environment exactly once, here, into a frozen typed object.
 * Nothing else in the service reads `process.env`.
 *
 * Every variable is declared once below (name, kind, default, constraints, meaning); the declaration yields the
 * typed value, the start-up error naming the variable, and the README's configuration table
 * (`npm run docs:config`; tests/unit/config/readme-table.test.ts fails when the table is stale).
 * A value that cannot be read stops the service; it is never taken as 0 or as the default.
 */
import { createPrivateKey } from 'node:crypto';
import path from 'node:path';
import { deepFreeze, type Env, type Rule, readVariables, type ValuesOf } from './config/read.js';
import { duration, durationList, hostPortList, integer, oneOf, text, trustProxy, url } from './config/variables.js';
import { defaultConnectionsPerTenant } from './db/tenant-shares.js';

export { parseDuration } from './config/duration.js';
export { ConfigError, deepFreeze } from './config/read.js';

const GENERATED_IN_SANDBOX = 'sandbox: generated';
/** RFC 6750 §2.1's `b64token` (token68): what `Authorization: Bearer <token>` can carry. */
const BEARER_TOKEN68 = '^[A-Za-z0-9._~+/-]+=*$';

export const variables = {
  PORT: integer({ default: 3000, minimum: 0, maximum: 65535, description: 'HTTP port' }),
  HOST: text({ default: '127.0.0.1', description: 'Listen address (`0.0.0.0` to accept remote connections)' }),
  DATABASE_URL: text({
    pattern: '^postgres(ql)?://',
    accepts: 'a postgres:// or postgresql:// connection string',
    secret: true,
    description: 'PostgreSQL to use (pooled); unset: PGlite in `DATA_DIR/pgdata`',
  }),
  DATABASE_POOL_SIZE: integer({
    default: 10,
    minimum: 1,
    maximum: 500,
    description: 'PostgreSQL connections per process',
  }),
  DATABASE_CONNECTIONS_PER_TENANT: integer({
    minimum: 1,
    maximum: 500,
    defaultText: 'half of `DATABASE_POOL_SIZE` (at least 1)',
    description:
      "Of a process's PostgreSQL connections, how many one tenant's requests may hold at once (transactions, statements run alone), so that one tenant's slow work (a lock it waits for, a long rename, slow statements) leaves the others connections. A request past its tenant's share waits for one of them, up to 5 s, then is answered 503 `service-unavailable` with `Retry-After`, having changed nothing. All tenants' second and later requests together also leave a quarter of the pool (at least one) to tenants with none under way. A share equal to `DATABASE_POOL_SIZE` lifts both bounds. Counted per process, like the pool (see docs/deployment.md for sizing)",
  }),
  LIST_CACHE_MB: integer({
    default: 32,
    minimum: 0,
    maximum: 4_096,
    description:
      "JSON of rendered sites and messages kept per process, half by id and version, so that a list page reads only its rows' ids and versions and a GET by id only its resource's version, half as the last answer of each page asked (MiB; 0 keeps none: every page and every GET loads and renders its rows)",
  }),
  DATABASE_STATEMENT_TIMEOUT_MS: integer({
    default: 30_000,
    minimum: 100,
    maximum: 3_600_000,
    description:
      "PostgreSQL's `statement_timeout` on every connection (a lock wait counts); the client also gives up on an unanswered query a little later (plus the larger of 1 s and 10%). Either answers 503 `service-unavailable` with `Retry-After`. For a shorter lock wait, set a lock timeout on the connection string, e.g. `DATABASE_URL=postgres://…?options=-c%20lock_timeout%3D5000` (answered 503 too)",
  }),
  WEB_CONCURRENCY: integer({
    default: 1,
    minimum: 1,
    maximum: 256,
    description:
      "API processes on this host (Node's cluster module). Above 1 a primary process migrates and prepares once, then forks that many children sharing the port; SIGTERM stops them gracefully",
  }),
  DATA_DIR: text({
    default: './data',
    // `DATA_DIR="~/svc"` reaches the service unexpanded (the shell expands ~ only unquoted, at a word's start):
    // it would make a directory named `~` in the working directory.
    check: (dir) => !dir.startsWith('~'),
    accepts: 'a directory path, not starting with `~` (the shell left it unexpanded: write `$HOME/…`)',
    description:
      'Embedded database, `credentials.json` and `admin-token` of the sandbox. One process at a time: a second start (or `npm run migrate`) on a DATA_DIR whose embedded database is open is refused, naming it',
  }),
  ENVIRONMENT: oneOf(['sandbox', 'production'], {
    default: 'sandbox',
    description: 'Separate keys, token issuer and audience',
  }),
  PUBLIC_BASE_URL: url({
    defaultText: '`http://HOST:PORT`',
    description: 'The address clients use; download URLs are built on it',
  }),
  PRODUCTION_BASE_URL: url({
    defaultText: '`PUBLIC_BASE_URL` in production; otherwise unset',
    description: 'The production server listed in the OpenAPI documents (`servers`); listed only when known',
  }),
  SANDBOX_BASE_URL: url({
    defaultText: '`PUBLIC_BASE_URL` in the sandbox; otherwise unset',
    description: 'The sandbox server listed in the OpenAPI documents (`servers`); listed only when known',
  }),
  API_CONTACT_NAME: text({
    default: 'Site Services API support',
    description: '`info.contact.name` of the OpenAPI documents: whom integrators ask about the API',
  }),
  API_CONTACT_URL: url({
    defaultText: '`PUBLIC_BASE_URL/docs`',
    description: '`info.contact.url` of the OpenAPI documents',
  }),
  API_CONTACT_EMAIL: text({
    pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$',
    accepts: 'an email address',
    description: '`info.contact.email` of the OpenAPI documents (none when unset)',
  }),
  PROBLEM_BASE_URL: url({
    defaultText: '`PUBLIC_BASE_URL/problems`',
    description: 'Prefix of problem `type` addresses',
  }),
  ADMIN_TOKEN: text({
    minLength: 16,
    // The operator sends it as `Authorization: Bearer <token>`: one word (src/http/auth.ts), of RFC 6750's
    // characters. A token with white space, or one a header cannot carry as is (non-ASCII), could never match,
    // and the operator API would be locked out without a word: refused at start instead.
    pattern: BEARER_TOKEN68,
    accepts:
      'at least 16 characters of a Bearer token (RFC 6750): letters, digits and `-._~+/`, then `=` only at the end; no white space',
    secret: true,
    defaultText: `${GENERATED_IN_SANDBOX}; production: unset`,
    description: 'Bearer token of the operator API (`/admin/v1`); unset in production turns the operator API off (404)',
  }),
  TOKEN_TTL_SECONDS: integer({
    default: 3600,
    minimum: 30,
    maximum: 86_400,
    description: 'Access-token lifetime (`expires_in`)',
  }),
  RATE_LIMIT_PER_MINUTE: integer({
    default: 100,
    minimum: 1,
    maximum: 10_000_000,
    description: 'Requests per client address (an IPv6 address: its /64) per minute, per process',
  }),
  CONNECTIONS_PER_ADDRESS: integer({
    default: 256,
    minimum: 1,
    maximum: 1_000_000,
    description:
      'Open connections per client address (an IPv6 address: its /64), per process; past it a new connection is closed at once. Not applied to a trusted proxy (TRUST_PROXY)',
  }),
  SITE_CODE_VISIT_REWRITES_PER_MINUTE: integer({
    default: 50_000,
    minimum: 1,
    maximum: 100_000_000,
    description:
      "Site visits one client's siteCode changes may rewrite in any one minute, per process (a new siteCode is a new version of each visit of the site, one database write each); a rename is admitted while the minute holds fewer, and past that is 429 until they are a minute old",
  }),
  ADMIN_AUTH_FAILURES_PER_MINUTE: integer({
    default: 10,
    minimum: 1,
    maximum: 10_000_000,
    description:
      'Wrong operator tokens one client address may send in any one minute; past that, the operator API refuses the address (429) until the oldest is a minute old',
  }),
  REQUEST_TIMEOUT_MS: integer({
    default: 120_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description:
      'Longest a request may take to arrive completely (a 10 MiB upload included); slower ones get 408 `request-timeout`',
  }),
  RESPONSE_TIMEOUT_MS: integer({
    default: 120_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description:
      'Longest a response may take to leave once it is ready (a 10 MiB download included); a client that reads it slower is disconnected',
  }),
  TRUST_PROXY: trustProxy({ default: 'off', description: 'Trusted proxies, so the rate limit sees client addresses' }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'The level of the pino logger',
  }),
  TOKEN_SIGNING_KEY: text({
    check: isEd25519PrivateKey,
    map: (pem) => pem.replace(/\\n/g, '\n'),
    accepts: 'an Ed25519 private key in PKCS#8 PEM (`\\n` escapes allowed)',
    secret: true,
    defaultText: GENERATED_IN_SANDBOX,
    description: 'Signs access tokens',
  }),
  APP_SECRET: text({
    minLength: 32,
    secret: true,
    defaultText: GENERATED_IN_SANDBOX,
    description: 'Cursor sealing and legacy webhook signing keys derive from it',
  }),
  WEBHOOK_ENCRYPTION_KEY: text({
    check: (key) => Buffer.from(key, 'base64').length === 32,
    accepts: '32 bytes, base64-encoded',
    secret: true,
    defaultText: GENERATED_IN_SANDBOX,
    description: 'Encrypts webhook secrets at rest (AES-256-GCM)',
  }),
  ROLE: oneOf(['all', 'api', 'worker'], {
    default: 'all',
    description: '`api` serves HTTP, `worker` runs the webhook delivery worker (no HTTP port), `all` does both',
  }),
  WEBHOOK_MAX_ATTEMPTS: integer({
    default: 8,
    minimum: 1,
    maximum: 100,
    description: 'Claimed attempts per delivery (and per operator retry) before it fails terminally',
  }),
  WEBHOOK_TIMEOUT_MS: integer({
    default: 10_000,
    minimum: 100,
    maximum: 120_000,
    description: 'Time limit of one attempt (kept below 80% of the lease)',
  }),
  WEBHOOK_RETRY_SCHEDULE: durationList({
    default: '5s,5m,30m,2h,5h,10h,10h',
    description: 'Waits between attempts, each ±20% jitter; the last repeats',
  }),
  WEBHOOK_LEASE_MS: integer({
    default: 60_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description:
      "How long a claimed delivery stays with its worker; a dead worker's deliveries are claimed again after it",
  }),
  WEBHOOK_POLL_INTERVAL_MS: integer({
    default: 1_000,
    minimum: 10,
    maximum: 600_000,
    description: 'Safety-net poll of the delivery worker (it is woken on commit by LISTEN/NOTIFY)',
  }),
  WEBHOOK_CONCURRENCY: integer({
    // Births may fill half the slots while the queue has deliveries waiting: at 16 that half was below what a
    // process's own creates keep in flight at full load, and most deliveries went through the queue instead.
    default: 32,
    minimum: 1,
    maximum: 1_000,
    description:
      'Deliveries in flight per worker process, shared out by tenant and destination; a tenant with nothing in flight may use one of an eighth more (at least 1) when all are busy. With ROLE=all a free slot also takes the deliveries of an event this process writes, claimed with it (no queue round trip)',
  }),
  WEBHOOK_AUTO_DISABLE_AFTER: duration({
    default: '0',
    defaultText: '`0` (off)',
    description: 'Deactivate a subscription that has failed without a success for this long (e.g. `3d`); 0 = never',
  }),
  WEBHOOK_LISTENER_GRACE: duration({
    default: '60s',
    minimum: 1_000,
    maximum: 86_400_000,
    description:
      'How long a sandbox webhook listener (`svc listen`) outlives its dropped stream, for the command to reconnect and resume; then its pending deliveries fail ("listener closed")',
  }),
  WEBHOOK_HISTORY_RETENTION: duration({
    default: '90d',
    description:
      'How long finished deliveries (with their attempt logs), their events and closed sandbox listeners are kept after they were created; then the maintenance pass (every 10 minutes) deletes them, and a failed delivery can no longer be seen or retried by the operator. Pending deliveries are never deleted. `maintenance_purged_rows_total` counts what went. 0 = kept for ever',
  }),
  METRICS_PORT: integer({
    minimum: 1,
    maximum: 65535,
    description:
      'Also serve `GET /metrics` (Prometheus) without a token on this port of `HOST`, for a scraper on a private network; with `WEB_CONCURRENCY` above 1 the primary serves it, summed over its processes. A `ROLE=worker` process (no API port) also answers its health probes here, `GET /health` and `GET /ready`',
  }),
  WEBHOOK_TEST_ALLOWED_DESTINATIONS: hostPortList({
    default: '',
    defaultText: 'unset',
    description:
      "For a test environment you host yourself: `host:port` pairs (e.g. `localhost:8443,10.0.0.5:9000`) that subscriptions may name although they are loopback, private or not on port 443. The URL is still `https://` (its certificate trusted by the service, e.g. through `NODE_EXTRA_CA_CERTS`), without credentials or fragment. These host names are resolved by the system resolver (the hosts file included); a tenant's are asked of DNS, the name servers of `/etc/resolv.conf`",
  }),
};

/** Variables Node.js reads itself, listed in the README's table beside the service's own. */
export const readByNode = [
  {
    name: 'NODE_EXTRA_CA_CERTS',
    accepts: 'a path to a PEM file',
    description: "Node's own: extra CAs trusted for webhook receivers",
  },
] as const;

type Values = ValuesOf<typeof variables>;

/** A key production needs, with the command that makes one (the README's "Generate production keys"). */
const requiredInProduction = (
  variable: 'TOKEN_SIGNING_KEY' | 'APP_SECRET' | 'WEBHOOK_ENCRYPTION_KEY',
  generatedBy: string,
) => ({
  variable,
  says: `must be set in production (make one with \`${generatedBy}\`)`,
  broken: (values: Values) => values.ENVIRONMENT === 'production' && values[variable] === undefined,
});

/** Rules between variables, checked once every variable is valid on its own; the README lists each with its variable. */
export const rules: readonly Rule<typeof variables>[] = [
  requiredInProduction('TOKEN_SIGNING_KEY', 'openssl genpkey -algorithm ed25519'),
  requiredInProduction('APP_SECRET', 'openssl rand -base64 48'),
  requiredInProduction('WEBHOOK_ENCRYPTION_KEY', 'openssl rand -base64 32'),
  {
    variable: 'WEBHOOK_TEST_ALLOWED_DESTINATIONS',
    says: 'must not be set in production',
    broken: (values) => values.ENVIRONMENT === 'production' && values.WEBHOOK_TEST_ALLOWED_DESTINATIONS.length > 0,
  },
  {
    variable: 'METRICS_PORT',
    says: "must not be PORT: it is a listener of its own, beside the API's",
    broken: (values) => values.METRICS_PORT === values.PORT && values.ROLE !== 'worker',
  },
  {
    variable: 'DATABASE_CONNECTIONS_PER_TENANT',
    says: 'must not be above DATABASE_POOL_SIZE: a tenant cannot hold more connections than the pool has',
    broken: (values) =>
      values.DATABASE_CONNECTIONS_PER_TENANT !== undefined &&
      values.DATABASE_CONNECTIONS_PER_TENANT > values.DATABASE_POOL_SIZE,
  },
  {
    variable: 'WEB_CONCURRENCY',
    says: 'above 1 needs DATABASE_URL: the embedded database belongs to one process',
    broken: (values) => values.WEB_CONCURRENCY > 1 && values.DATABASE_URL === undefined,
  },
];

/** The variables' values under the names the service uses. */
function toConfig(values: Values) {
  const urlHost = values.HOST.includes(':') ? `[${values.HOST}]` : values.HOST;
  const publicBaseUrl =
    values.PUBLIC_BASE_URL ?? `http://${urlHost === '0.0.0.0' ? '127.0.0.1' : urlHost}:${values.PORT}`;
  return {
    port: values.PORT,
    host: values.HOST,
    databaseUrl: values.DATABASE_URL,
    databasePoolSize: values.DATABASE_POOL_SIZE,
    /** Connections of the pool one tenant's requests may hold at once (src/db/tenant-shares.ts). */
    databaseConnectionsPerTenant:
      values.DATABASE_CONNECTIONS_PER_TENANT ?? defaultConnectionsPerTenant(values.DATABASE_POOL_SIZE),
    /** Bytes of rendered JSON a process keeps for its lists (`RenderedResources`). */
    listCacheBytes: values.LIST_CACHE_MB * 1024 * 1024,
    /**
     * PostgreSQL's `statement_timeout` on every pooled connection; the client gives up a little later
     * (src/db/database.ts) in case the database does not answer at all. Either is answered 503.
     */
    databaseStatementTimeoutMs: values.DATABASE_STATEMENT_TIMEOUT_MS,
    dataDir: path.resolve(values.DATA_DIR),
    environment: values.ENVIRONMENT,
    role: values.ROLE,
    webConcurrency: values.WEB_CONCURRENCY,
    publicBaseUrl,
    /**
     * The base addresses of the two environments, as the OpenAPI documents list them (servers). The one
     * this process runs as defaults to PUBLIC_BASE_URL; the other is known only when configured.
     */
    productionBaseUrl: values.PRODUCTION_BASE_URL ?? (values.ENVIRONMENT === 'production' ? publicBaseUrl : undefined),
    sandboxBaseUrl: values.SANDBOX_BASE_URL ?? (values.ENVIRONMENT === 'sandbox' ? publicBaseUrl : undefined),
    problemBaseUrl: values.PROBLEM_BASE_URL ?? `${publicBaseUrl}/problems`,
    /** info.contact of both OpenAPI documents: whom integrators ask about the API. */
    apiContact: {
      name: values.API_CONTACT_NAME,
      url: values.API_CONTACT_URL ?? `${publicBaseUrl}/docs`,
      email: values.API_CONTACT_EMAIL,
    },
    adminToken: values.ADMIN_TOKEN,
    tokenTtlSeconds: values.TOKEN_TTL_SECONDS,
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    connectionsPerAddress: values.CONNECTIONS_PER_ADDRESS,
    siteCodeVisitRewritesPerMinute: values.SITE_CODE_VISIT_REWRITES_PER_MINUTE,
    adminAuthFailuresPerMinute: values.ADMIN_AUTH_FAILURES_PER_MINUTE,
    /** Longest a request may take to arrive completely (headers and body); slower ones get 408. */
    requestTimeoutMs: values.REQUEST_TIMEOUT_MS,
    /** Longest a response may take to be sent (read by the client) once ready; slower readers are disconnected. */
    responseTimeoutMs: values.RESPONSE_TIMEOUT_MS,
    trustProxy: values.TRUST_PROXY,
    /** A pino level; typed as text so that tests and tools may pass one they read themselves. */
    logLevel: values.LOG_LEVEL as string,
    /** Server keys; required in production, generated once and kept in the database in sandbox. */
    keys: {
      tokenSigningKey: values.TOKEN_SIGNING_KEY,
      appSecret: values.APP_SECRET,
      webhookEncryptionKey: values.WEBHOOK_ENCRYPTION_KEY,
    },
    webhook: {
      /** Total claimed attempts per delivery (SPEC: 8). */
      maxAttempts: values.WEBHOOK_MAX_ATTEMPTS,
      /** Request timeout of one delivery attempt. */
      timeoutMs: values.WEBHOOK_TIMEOUT_MS,
      /** Waits between attempts, in milliseconds; the last one repeats when the budget is larger. */
      retryScheduleMs: values.WEBHOOK_RETRY_SCHEDULE,
      /** `host:port` pairs that skip the address and port rules. Tests only; refused in production. */
      testAllowedDestinations: values.WEBHOOK_TEST_ALLOWED_DESTINATIONS,
      /** How long a claimed delivery stays leased to its worker. */
      leaseMs: values.WEBHOOK_LEASE_MS,
      /** Safety-net poll interval of the delivery worker (it is woken on commit otherwise). */
      pollIntervalMs: values.WEBHOOK_POLL_INTERVAL_MS,
      /** Parallel deliveries per worker process. */
      concurrency: values.WEBHOOK_CONCURRENCY,
      /** Deactivate a subscription after this many milliseconds of uninterrupted failures; 0 = never. */
      autoDisableAfterMs: values.WEBHOOK_AUTO_DISABLE_AFTER,
      /** How long a sandbox webhook listener (`svc listen`) outlives its dropped stream, for the command to resume. */
      listenerGraceMs: values.WEBHOOK_LISTENER_GRACE,
      /** How long the delivery history is kept (deliveries, events, closed listeners); 0 = for ever. */
      historyRetentionMs: values.WEBHOOK_HISTORY_RETENTION,
    },
    metricsPort: values.METRICS_PORT,
  };
}

export type Config = ReturnType<typeof loadConfig>;
export type WebhookConfig = Config['webhook'];
export type Environment = Config['environment'];
export type Role = Config['role'];
export type TrustProxy = Config['trustProxy'];

export function loadConfig(env: Env = process.env) {
  return deepFreeze(toConfig(readVariables(variables, rules, env)));
}

/** Configuration for tests and tools: the defaults with some values replaced. */
export function configWith(overrides: Partial<Config>, env: Env = {}): Config {
  const base = loadConfig(env);
  return deepFreeze({ ...structuredClone(base), ...overrides }) as Config;
}

function isEd25519PrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'ed25519';
  } catch {
    return false;
  }
}
