/**
 * Configuration is read from the environment exactly once, here, into a frozen typed object.
 * Nothing else in the service reads `process.env`.
 */
import { createPrivateKey } from 'node:crypto';
import path from 'node:path';

export type Environment = 'sandbox' | 'production';
export type Role = 'all' | 'api' | 'worker';
export type TrustProxy = boolean | number | string[];

export interface WebhookConfig {
  /** Total claimed attempts per delivery (SPEC: 8). */
  readonly maxAttempts: number;
  /** Request timeout of one delivery attempt. */
  readonly timeoutMs: number;
  /** Waits between attempts, in milliseconds; the last one repeats when the budget is larger. */
  readonly retryScheduleMs: readonly number[];
  /** `host:port` pairs that skip the address and port rules. Tests only; refused in production. */
  readonly testAllowedDestinations: readonly string[];
  /** How long a claimed delivery stays leased to its worker. */
  readonly leaseMs: number;
  /** Safety-net poll interval of the delivery worker (it is woken on commit otherwise). */
  readonly pollIntervalMs: number;
  /** Parallel deliveries per worker process. */
  readonly concurrency: number;
  /** Deactivate a subscription after this many milliseconds of uninterrupted failures; 0 = never. */
  readonly autoDisableAfterMs: number;
  /** How long a sandbox webhook listener (`svc listen`) outlives its dropped stream, for the command to resume. */
  readonly listenerGraceMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /**
   * PostgreSQL's `statement_timeout` on every pooled connection; the client gives up a little later
   * (src/db/database.ts) in case the database does not answer at all. Either is answered 503.
   */
  readonly databaseStatementTimeoutMs: number;
  readonly dataDir: string;
  readonly environment: Environment;
  readonly role: Role;
  readonly webConcurrency: number;
  readonly publicBaseUrl: string;
  readonly productionBaseUrl: string;
  readonly sandboxBaseUrl: string;
  readonly problemBaseUrl: string;
  readonly adminToken: string | undefined;
  readonly tokenTtlSeconds: number;
  readonly rateLimitPerMinute: number;
  /** Longest a request may take to arrive completely (headers and body); slower ones get 408. */
  readonly requestTimeoutMs: number;
  readonly trustProxy: TrustProxy;
  readonly logLevel: string;
  /** Server keys; required in production, generated once and kept in the database in sandbox. */
  readonly keys: {
    readonly tokenSigningKey: string | undefined;
    readonly appSecret: string | undefined;
    readonly webhookEncryptionKey: string | undefined;
  };
  readonly webhook: WebhookConfig;
  readonly metricsPort: number | undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Parses a duration such as `500ms`, `5s`, `5m`, `2h` or a bare number of milliseconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = match[2] ?? 'ms';
  const factor = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit]!;
  return Math.round(value * factor);
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  };
  const url = (name: string, fallback: string): string => {
    const raw = read(name) ?? fallback;
    try {
      const parsed = new URL(raw);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an absolute http(s) URL (got "${raw}")`);
      return fallback;
    }
  };

  const port = int('PORT', 3000, 0, 65535);
  const host = read('HOST') ?? '127.0.0.1';
  const environment = oneOf('ENVIRONMENT', ['sandbox', 'production'] as const, 'sandbox');
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const publicBaseUrl = url('PUBLIC_BASE_URL', `http://${urlHost === '0.0.0.0' ? '127.0.0.1' : urlHost}:${port}`);

  const databaseUrl = read('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// connection string');
  }

  const retrySchedule = (read('WEBHOOK_RETRY_SCHEDULE') ?? '5s,5m,30m,2h,5h,10h,10h')
    .split(',')
    .map((part) => parseDuration(part));
  if (retrySchedule.some((ms) => ms === undefined)) {
    problems.push('WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of durations such as 5s,5m,30m,2h');
  }
  const testAllowedDestinations = (read('WEBHOOK_TEST_ALLOWED_DESTINATIONS') ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  if (testAllowedDestinations.some((entry) => !/^[^:\s]+:\d{1,5}$|^\[[0-9a-f:.]+\]:\d{1,5}$/.test(entry))) {
    problems.push('WEBHOOK_TEST_ALLOWED_DESTINATIONS must be a comma-separated list of host:port');
  }
  if (environment === 'production' && testAllowedDestinations.length > 0) {
    problems.push('WEBHOOK_TEST_ALLOWED_DESTINATIONS must not be set in production');
  }

  const listenerGraceMs = parseDuration(read('WEBHOOK_LISTENER_GRACE') ?? '60s');
  if (listenerGraceMs === undefined || listenerGraceMs < 1_000 || listenerGraceMs > 86_400_000) {
    problems.push('WEBHOOK_LISTENER_GRACE must be a duration from 1s to 24h, such as 60s or 5m');
  }

  const keys = {
    tokenSigningKey: read('TOKEN_SIGNING_KEY')?.replace(/\\n/g, '\n'),
    appSecret: read('APP_SECRET'),
    webhookEncryptionKey: read('WEBHOOK_ENCRYPTION_KEY'),
  };
  if (environment === 'production') {
    for (const [name, value] of [
      ['TOKEN_SIGNING_KEY', keys.tokenSigningKey],
      ['APP_SECRET', keys.appSecret],
      ['WEBHOOK_ENCRYPTION_KEY', keys.webhookEncryptionKey],
    ] as const) {
      if (value === undefined) problems.push(`${name} is required in production`);
    }
  }
  if (keys.tokenSigningKey !== undefined && !isEd25519PrivateKey(keys.tokenSigningKey)) {
    problems.push('TOKEN_SIGNING_KEY must be an Ed25519 private key in PKCS#8 PEM');
  }
  if (keys.appSecret !== undefined && keys.appSecret.length < 32) {
    problems.push('APP_SECRET must be at least 32 characters');
  }
  if (keys.webhookEncryptionKey !== undefined && Buffer.from(keys.webhookEncryptionKey, 'base64').length !== 32) {
    problems.push('WEBHOOK_ENCRYPTION_KEY must be 32 bytes, base64-encoded');
  }

  const adminToken = read('ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) problems.push('ADMIN_TOKEN must be at least 16 characters');

  const config: Config = {
    port,
    host,
    databaseUrl,
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 500),
    databaseStatementTimeoutMs: int('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    dataDir: path.resolve(read('DATA_DIR') ?? './data'),
    environment,
    role: oneOf('ROLE', ['all', 'api', 'worker'] as const, 'all'),
    webConcurrency: int('WEB_CONCURRENCY', 1, 1, 256),
    publicBaseUrl,
    productionBaseUrl: url('PRODUCTION_BASE_URL', publicBaseUrl),
    sandboxBaseUrl: url('SANDBOX_BASE_URL', publicBaseUrl),
    problemBaseUrl: url('PROBLEM_BASE_URL', `${publicBaseUrl}/problems`),
    adminToken,
    tokenTtlSeconds: int('TOKEN_TTL_SECONDS', 3600, 30, 86_400),
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 100, 1, 10_000_000),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
    trustProxy: parseTrustProxy(read('TRUST_PROXY'), problems),
    logLevel: oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    keys,
    webhook: {
      maxAttempts: int('WEBHOOK_MAX_ATTEMPTS', 8, 1, 100),
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      retryScheduleMs: retrySchedule.map((ms) => ms ?? 0),
      testAllowedDestinations,
      leaseMs: int('WEBHOOK_LEASE_MS', 60_000, 1_000, 3_600_000),
      pollIntervalMs: int('WEBHOOK_POLL_INTERVAL_MS', 1_000, 10, 600_000),
      concurrency: int('WEBHOOK_CONCURRENCY', 16, 1, 1_000),
      autoDisableAfterMs: parseDuration(read('WEBHOOK_AUTO_DISABLE_AFTER') ?? '0') ?? 0,
      listenerGraceMs: listenerGraceMs ?? 60_000,
    },
    metricsPort: read('METRICS_PORT') === undefined ? undefined : int('METRICS_PORT', 9464, 1, 65535),
  };
  if (config.webConcurrency > 1 && databaseUrl === undefined) {
    problems.push('WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded database belongs to one process');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function isEd25519PrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'ed25519';
  } catch {
    return false;
  }
}

function parseTrustProxy(raw: string | undefined, problems: string[]): TrustProxy {
  if (raw === undefined || raw === 'false' || raw === 'off') return false;
  if (raw === 'true' || raw === 'on') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (entries.length === 0 || entries.some((entry) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry))) {
    problems.push('TRUST_PROXY must be off, on, a hop count, or a comma-separated list of addresses/CIDRs');
    return false;
  }
  return entries;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Configuration for tests and tools: the defaults with some values replaced. */
export function configWith(overrides: Partial<Config>, env: Env = {}): Config {
  const base = loadConfig(env);
  return deepFreeze({ ...structuredClone(base), ...overrides });
}
