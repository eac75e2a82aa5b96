/**
 * The configured keys at start (they need a database: resolveServerKeys reads and writes server_secrets).
 * Reading the configuration itself is unit-tested in tests/unit/config/.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { generateServerKeys, resolveServerKeys } from '../src/runtime/server-keys.js';
import { openTestDatabase } from './helpers/app.js';
import { productionKeys } from './helpers/production-keys.js';

describe('production', () => {
  it('starts with configured keys (PEM with \\n escapes) and leaves the operator API off without ADMIN_TOKEN', async () => {
    const env = productionKeys();
    const config = loadConfig({ ENVIRONMENT: 'production', ...env });
    expect(config.keys.tokenSigningKey).toContain('\n-----END PRIVATE KEY-----');
    const database = await openTestDatabase();
    try {
      const keys = await resolveServerKeys(config, database.db);
      expect(keys.adminToken).toBeUndefined();
      expect(keys.adminTokenGenerated).toBe(false);
      expect(keys.tokenKeyId).toMatch(/^production-/);
      // The same keys as generateServerKeys takes from the configuration.
      const again = generateServerKeys(config);
      expect(again.tokenPublicKey.export({ format: 'jwk' })).toEqual(keys.tokenPublicKey.export({ format: 'jwk' }));
      expect(again.cursorKey.equals(keys.cursorKey)).toBe(true);
      expect(keys.webhookEncryptionKey.equals(Buffer.from(env.WEBHOOK_ENCRYPTION_KEY, 'base64'))).toBe(true);

      const withAdmin = await resolveServerKeys(
        loadConfig({ ENVIRONMENT: 'production', ...env, ADMIN_TOKEN: 'operator-token-0123456789' }),
        database.db,
      );
      expect(withAdmin.adminToken).toBe('operator-token-0123456789');
    } finally {
      await database.close();
    }
  });
});

describe('sandbox', () => {
  it('generates each missing key once and keeps it: a second process and a restart get the same keys', async () => {
    const config = loadConfig({ ENVIRONMENT: 'sandbox' });
    const database = await openTestDatabase();
    try {
      const [first, second] = await Promise.all([
        resolveServerKeys(config, database.db),
        resolveServerKeys(config, database.db),
      ]);
      const restarted = await resolveServerKeys(config, database.db);
      expect(first.adminTokenGenerated).toBe(true);
      expect(first.adminToken).toMatch(/^adm_/);
      for (const keys of [second, restarted]) {
        expect(keys.tokenKeyId).toBe(first.tokenKeyId);
        expect(keys.cursorKey.equals(first.cursorKey)).toBe(true);
        expect(keys.webhookEncryptionKey.equals(first.webhookEncryptionKey)).toBe(true);
        expect(keys.legacyWebhookKey.equals(first.legacyWebhookKey)).toBe(true);
        expect(keys.adminToken).toBe(first.adminToken);
      }
      // A key given in the configuration is taken as given, beside the kept ones.
      const withAdmin = await resolveServerKeys(
        loadConfig({ ENVIRONMENT: 'sandbox', ADMIN_TOKEN: 'operator-token-0123456789' }),
        database.db,
      );
      expect(withAdmin.adminToken).toBe('operator-token-0123456789');
      expect(withAdmin.adminTokenGenerated).toBe(false);
      expect(withAdmin.tokenKeyId).toBe(first.tokenKeyId);
    } finally {
      await database.close();
    }
  });
});
