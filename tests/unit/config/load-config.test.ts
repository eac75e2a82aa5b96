/**
 * Reading the configuration from an environment: defaults, every variable, and a problem naming each
 * variable whose value cannot be read. No application and no database (the keys' use at start is in
 * tests/config.test.ts).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configWith, loadConfig, variables } from '../../../src/config.js';
import { productionKeys } from '../../helpers/production-keys.js';

/** The problems loadConfig reports for `env`; fails when it does not throw. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      databaseStatementTimeoutMs: 30_000,
      dataDir: path.resolve('./data'),
      environment: 'sandbox',
      publicBaseUrl: 'http://127.0.0.1:3000',
      // The sandbox's address is this process's; production's is not known unless configured.
      productionBaseUrl: undefined,
      sandboxBaseUrl: 'http://127.0.0.1:3000',
      problemBaseUrl: 'http://127.0.0.1:3000/problems',
      apiContact: { name: 'Site Services API support', url: 'http://127.0.0.1:3000/docs', email: undefined },
      adminToken: undefined,
      tokenTtlSeconds: 3600,
      rateLimitPerMinute: 100,
      trustProxy: false,
      logLevel: 'info',
      keys: { tokenSigningKey: undefined, appSecret: undefined, webhookEncryptionKey: undefined },
    });
  });

  it('derives PUBLIC_BASE_URL from HOST and PORT, and PROBLEM_BASE_URL from PUBLIC_BASE_URL', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).publicBaseUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ HOST: '::1', PORT: '8080' }).publicBaseUrl).toBe('http://[::1]:8080');
    const config = loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' });
    expect(config.publicBaseUrl).toBe('https://api.example.com');
    expect(config.problemBaseUrl).toBe('https://api.example.com/problems');
    expect(
      loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com', PROBLEM_BASE_URL: 'https://docs.example.com/p' })
        .problemBaseUrl,
    ).toBe('https://docs.example.com/p');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: ' 8443 ',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      DATA_DIR: '/var/lib/site-services',
      ENVIRONMENT: 'sandbox',
      ADMIN_TOKEN: 'a'.repeat(16),
      TOKEN_TTL_SECONDS: '600',
      RATE_LIMIT_PER_MINUTE: '20',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 8443,
      databaseUrl: 'postgresql://u@db:5432/x',
      dataDir: '/var/lib/site-services',
      adminToken: 'a'.repeat(16),
      tokenTtlSeconds: 600,
      rateLimitPerMinute: 20,
      trustProxy: ['10.0.0.0/8', '192.168.1.1'],
      logLevel: 'warn',
    });
    expect(loadConfig({ TRUST_PROXY: 'on' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  it('trims ADMIN_TOKEN as every variable (a trailing line break), and takes token68 with its = padding', () => {
    expect(loadConfig({ ADMIN_TOKEN: ' adm_0123456789abcdef\n' }).adminToken).toBe('adm_0123456789abcdef');
    expect(loadConfig({ ADMIN_TOKEN: 'adm-0.1_2~3+4/5abcdef==' }).adminToken).toBe('adm-0.1_2~3+4/5abcdef==');
  });

  it('treats empty and blank variables as unset', () => {
    expect(loadConfig({ PORT: '', ADMIN_TOKEN: '   ', DATABASE_URL: '' })).toMatchObject({
      port: 3000,
      adminToken: undefined,
      databaseUrl: undefined,
    });
  });

  it('is frozen, nested objects included', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.keys)).toBe(true);
    expect(Object.isFrozen(config.webhook)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(Object.isFrozen(configWith({ port: 1 }))).toBe(true);
  });
});

describe('loadConfig validation names the bad variable', () => {
  const cases: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'http' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '30.5' }],
    ['ENVIRONMENT', { ENVIRONMENT: 'staging' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'not a url' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://example.com' }],
    ['PROBLEM_BASE_URL', { PROBLEM_BASE_URL: '/problems' }],
    ['PRODUCTION_BASE_URL', { PRODUCTION_BASE_URL: 'example.com' }],
    ['SANDBOX_BASE_URL', { SANDBOX_BASE_URL: 'example.com' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://localhost/db' }],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }],
    ['DATABASE_STATEMENT_TIMEOUT_MS', { DATABASE_STATEMENT_TIMEOUT_MS: '0' }],
    // Quoted in the shell, ~ is not expanded: the service would create a directory named `~`.
    ['DATA_DIR', { DATA_DIR: '~/site-services' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'short' }],
    // What `Authorization: Bearer` cannot carry (RFC 6750 token68): the operator API could never be reached.
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'operator token 0123456789' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'operator-token-\u00e9-0123456789' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'operator=token-0123456789' }],
    ['TOKEN_TTL_SECONDS', { TOKEN_TTL_SECONDS: '10' }],
    ['TOKEN_TTL_SECONDS', { TOKEN_TTL_SECONDS: 'an hour' }],
    ['RATE_LIMIT_PER_MINUTE', { RATE_LIMIT_PER_MINUTE: '0' }],
    ['RATE_LIMIT_PER_MINUTE', { RATE_LIMIT_PER_MINUTE: '-5' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'yes please' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['APP_SECRET', { APP_SECRET: 'too-short' }],
    ['WEBHOOK_ENCRYPTION_KEY', { WEBHOOK_ENCRYPTION_KEY: randomBytes(16).toString('base64') }],
    ['TOKEN_SIGNING_KEY', { TOKEN_SIGNING_KEY: 'not a key' }],
    [
      'TOKEN_SIGNING_KEY',
      {
        TOKEN_SIGNING_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
          .privateKey.export({ format: 'pem', type: 'pkcs8' })
          .toString(),
      },
    ],
    ['WEBHOOK_RETRY_SCHEDULE', { WEBHOOK_RETRY_SCHEDULE: '5s,later' }],
    ['WEBHOOK_TEST_ALLOWED_DESTINATIONS', { WEBHOOK_TEST_ALLOWED_DESTINATIONS: 'localhost' }],
  ];
  it.each(cases)('%s: %j', (variable, env) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(variable);
  });

  it('WEB_CONCURRENCY above 1 needs DATABASE_URL (the embedded database belongs to one process)', () => {
    expect(problemsOf({ WEB_CONCURRENCY: '2' })).toEqual([expect.stringContaining('WEB_CONCURRENCY')]);
    expect(loadConfig({ WEB_CONCURRENCY: '4', DATABASE_URL: 'postgres://u@db/x' }).webConcurrency).toBe(4);
    expect(loadConfig({ WEB_CONCURRENCY: '1' }).webConcurrency).toBe(1);
  });

  it('METRICS_PORT is not PORT (it would read as the port being taken by another process), unless no HTTP port is served', () => {
    expect(problemsOf({ PORT: '3001', METRICS_PORT: '3001' })).toEqual([
      "METRICS_PORT must not be PORT: it is a listener of its own, beside the API's",
    ]);
    expect(loadConfig({ PORT: '3001', METRICS_PORT: '3001', ROLE: 'worker' }).metricsPort).toBe(3001);
    expect(loadConfig({ PORT: '3001', METRICS_PORT: '9464' }).metricsPort).toBe(9464);
  });

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'x', LOG_LEVEL: 'loud', ENVIRONMENT: 'staging' });
    expect(problems.map((problem) => problem.split(' ')[0]).sort()).toEqual(['ENVIRONMENT', 'LOG_LEVEL', 'PORT']);
    const error = (() => {
      try {
        loadConfig({ PORT: 'x' });
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message).toMatch(/Invalid configuration:[\s\S]*PORT/);
  });
});

describe('production', () => {
  it('requires each key and names the missing ones', () => {
    const problems = problemsOf({ ENVIRONMENT: 'production' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('TOKEN_SIGNING_KEY'),
        expect.stringContaining('APP_SECRET'),
        expect.stringContaining('WEBHOOK_ENCRYPTION_KEY'),
      ]),
    );
    expect(problems).toHaveLength(3);
    // Each says how to make one.
    expect(problems).toContain(
      'TOKEN_SIGNING_KEY must be set in production (make one with `openssl genpkey -algorithm ed25519`)',
    );
    expect(problems).toContain(
      'WEBHOOK_ENCRYPTION_KEY must be set in production (make one with `openssl rand -base64 32`)',
    );
    const { APP_SECRET: _omitted, ...withoutAppSecret } = productionKeys();
    expect(problemsOf({ ENVIRONMENT: 'production', ...withoutAppSecret })).toEqual([
      expect.stringContaining('APP_SECRET'),
    ]);
  });

  it('refuses WEBHOOK_TEST_ALLOWED_DESTINATIONS', () => {
    const problems = problemsOf({
      ENVIRONMENT: 'production',
      ...productionKeys(),
      WEBHOOK_TEST_ALLOWED_DESTINATIONS: '127.0.0.1:8443',
    });
    expect(problems).toEqual([expect.stringContaining('WEBHOOK_TEST_ALLOWED_DESTINATIONS')]);
    expect(loadConfig({ WEBHOOK_TEST_ALLOWED_DESTINATIONS: '127.0.0.1:8443' }).webhook.testAllowedDestinations).toEqual(
      ['127.0.0.1:8443'],
    );
  });
});

describe('a value the service cannot read stops it, naming the variable', () => {
  it('WEBHOOK_AUTO_DISABLE_AFTER=3 days is refused, not read as 0 (auto-disable off)', () => {
    expect(problemsOf({ WEBHOOK_AUTO_DISABLE_AFTER: '3 days' })).toEqual([
      expect.stringMatching(/^WEBHOOK_AUTO_DISABLE_AFTER must be a duration such as 3d.*\(got "3 days"\)$/),
    ]);
    expect(loadConfig({ WEBHOOK_AUTO_DISABLE_AFTER: '3d' }).webhook.autoDisableAfterMs).toBe(3 * 86_400_000);
    expect(loadConfig({}).webhook.autoDisableAfterMs).toBe(0);
  });

  const freeText = new Set(['API_CONTACT_NAME', 'HOST', 'DATA_DIR']);
  it.each(Object.keys(variables).filter((name) => !freeText.has(name)))('%s refuses "x y"', (name) => {
    expect(problemsOf({ [name]: 'x y' })).toEqual([expect.stringMatching(new RegExp(`^${name} must be `))]);
  });

  it('never echoes a secret in its message', () => {
    const secrets = { ADMIN_TOKEN: 'short-secret', APP_SECRET: 'short-secret', DATABASE_URL: 'mysql://u:pw@db/x' };
    for (const problem of problemsOf(secrets)) expect(problem).not.toMatch(/short-secret|pw/);
  });

  it('reads the webhook variables and durations of every form', () => {
    const config = loadConfig({
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_SCHEDULE: '250, 1.5s,2m ,1h,1d',
      WEBHOOK_LEASE_MS: '5000',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_AUTO_DISABLE_AFTER: '36h',
      WEBHOOK_HISTORY_RETENTION: '14d',
      WEBHOOK_TEST_ALLOWED_DESTINATIONS: 'LocalHost:8443, [::1]:9000',
      METRICS_PORT: '9464',
      ROLE: 'worker',
    });
    expect(config.webhook).toEqual({
      maxAttempts: 3,
      timeoutMs: 2000,
      retryScheduleMs: [250, 1500, 120_000, 3_600_000, 86_400_000],
      testAllowedDestinations: ['localhost:8443', '[::1]:9000'],
      leaseMs: 5000,
      pollIntervalMs: 50,
      concurrency: 4,
      autoDisableAfterMs: 36 * 3_600_000,
      listenerGraceMs: 60_000,
      historyRetentionMs: 14 * 86_400_000,
    });
    expect(config.metricsPort).toBe(9464);
    expect(config.role).toBe('worker');
  });

  it('checks the rules between variables once every variable is valid on its own', () => {
    // ENVIRONMENT is unreadable, so whether the keys are required cannot be said yet: one problem, not four.
    expect(problemsOf({ ENVIRONMENT: 'prod' })).toEqual([expect.stringContaining('ENVIRONMENT')]);
  });
});

describe("the OpenAPI documents' servers and contact", () => {
  it("knows the other environment's base address only when it is configured", () => {
    const production = loadConfig({
      ...productionKeys(),
      ENVIRONMENT: 'production',
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
    expect(production).toMatchObject({ productionBaseUrl: 'https://api.example.com', sandboxBaseUrl: undefined });
    expect(
      loadConfig({ PUBLIC_BASE_URL: 'https://sandbox.example.com', PRODUCTION_BASE_URL: 'https://api.example.com/' }),
    ).toMatchObject({ productionBaseUrl: 'https://api.example.com', sandboxBaseUrl: 'https://sandbox.example.com' });
  });

  it('reads the contact, refusing an address that is not one', () => {
    expect(
      loadConfig({
        API_CONTACT_NAME: 'Integration desk',
        API_CONTACT_URL: 'https://support.example.com/api',
        API_CONTACT_EMAIL: 'api@example.com',
      }).apiContact,
    ).toEqual({ name: 'Integration desk', url: 'https://support.example.com/api', email: 'api@example.com' });
    expect(() => loadConfig({ API_CONTACT_EMAIL: 'support at example.com' })).toThrow(/API_CONTACT_EMAIL/);
    expect(() => loadConfig({ API_CONTACT_URL: 'support@example.com' })).toThrow(/API_CONTACT_URL/);
  });
});
