/**
 * The `servers` of both OpenAPI documents: the environment the process runs as first (generators take
 * servers[0] as the default base address), the other one only when its address is configured.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { documentServers } from '../../../src/http/openapi.js';

const productionKeys = () => ({
  TOKEN_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  APP_SECRET: randomBytes(36).toString('base64'),
  WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
});

describe('the servers of the OpenAPI documents', () => {
  it('list only this environment when the other is not configured', () => {
    expect(documentServers(loadConfig({ PUBLIC_BASE_URL: 'https://sandbox.example.com' }))).toEqual([
      { url: 'https://sandbox.example.com', description: 'Sandbox' },
    ]);
    const production = loadConfig({
      ...productionKeys(),
      ENVIRONMENT: 'production',
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
    expect(documentServers(production)).toEqual([{ url: 'https://api.example.com', description: 'Production' }]);
  });

  it('put this environment first and the configured other one second', () => {
    expect(
      documentServers(
        loadConfig({
          ...productionKeys(),
          ENVIRONMENT: 'production',
          PRODUCTION_BASE_URL: 'https://api.example.com',
          SANDBOX_BASE_URL: 'https://sandbox.example.com',
        }),
      ),
    ).toEqual([
      { url: 'https://api.example.com', description: 'Production' },
      { url: 'https://sandbox.example.com', description: 'Sandbox' },
    ]);
    expect(documentServers(loadConfig({ PRODUCTION_BASE_URL: 'https://api.example.com' }))).toEqual([
      { url: 'http://127.0.0.1:3000', description: 'Sandbox' },
      { url: 'https://api.example.com', description: 'Production' },
    ]);
  });

  it('list one address once', () => {
    expect(
      documentServers(
        loadConfig({ PUBLIC_BASE_URL: 'https://one.example.com', PRODUCTION_BASE_URL: 'https://one.example.com' }),
      ),
    ).toEqual([{ url: 'https://one.example.com', description: 'Sandbox' }]);
  });
});
