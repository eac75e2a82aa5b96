/**
 * The keys a running service needs, resolved once at start. Production takes them from configuration
 * (startup fails without them); sandbox generates each missing one once and keeps it in the database,
 * so that every process of one deployment signs and verifies with the same keys.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/schema.js';
import { deriveKey } from '../lib/secrets.js';

export interface ServerKeys {
  /** Ed25519 key pair for access tokens of this environment. */
  readonly tokenPrivateKey: KeyObject;
  readonly tokenPublicKey: KeyObject;
  /** Key id published in the token header: the environment and a thumbprint prefix of the public key. */
  readonly tokenKeyId: string;
  /** AES-256-GCM key for pagination cursors. */
  readonly cursorKey: Buffer;
  /** AES-256-GCM key for webhook secrets at rest. */
  readonly webhookEncryptionKey: Buffer;
  /** HMAC key of legacy webhook signatures; clients never obtain it. */
  readonly legacyWebhookKey: Buffer;
  /** Operator API token; undefined in production when ADMIN_TOKEN is unset (operator API off). */
  readonly adminToken: string | undefined;
}

interface RawKeys {
  tokenSigningKey: string;
  appSecret: string;
  webhookEncryptionKey: string;
  adminToken: string | undefined;
}

const generators = {
  tokenSigningKey: () => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  appSecret: () => randomBytes(32).toString('base64url'),
  webhookEncryptionKey: () => randomBytes(32).toString('base64'),
  adminToken: () => `adm_${randomBytes(24).toString('base64url')}`,
};

type GeneratedKey = keyof typeof generators;

/**
 * The generated secrets of these names, each created first by whichever process needs it first (race-safe:
 * the first value stored wins). A restart finds them all in one read.
 */
async function keptSecrets(db: Kysely<Database>, names: readonly GeneratedKey[]): Promise<Map<GeneratedKey, string>> {
  if (names.length === 0) return new Map();
  const stored = (key: GeneratedKey) => `sandbox.${key}`;
  const read = async () => {
    const rows = await db
      .selectFrom('server_secrets')
      .select(['name', 'value'])
      .where('name', 'in', names.map(stored))
      .execute();
    const byName = new Map(rows.map((row) => [row.name, row.value]));
    return new Map(names.filter((key) => byName.has(stored(key))).map((key) => [key, byName.get(stored(key))!]));
  };
  const kept = await read();
  const missing = names.filter((key) => !kept.has(key));
  if (missing.length === 0) return kept;
  await db
    .insertInto('server_secrets')
    .values(missing.map((key) => ({ name: stored(key), value: generators[key]() })))
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  return read();
}

export async function resolveServerKeys(
  config: Config,
  db: Kysely<Database>,
): Promise<ServerKeys & { adminTokenGenerated: boolean }> {
  const configured = config.keys;
  const sandbox = config.environment === 'sandbox';
  const given: Record<GeneratedKey, string | undefined> = {
    tokenSigningKey: configured.tokenSigningKey,
    appSecret: configured.appSecret,
    webhookEncryptionKey: configured.webhookEncryptionKey,
    adminToken: config.adminToken,
  };
  const absent = (Object.keys(given) as GeneratedKey[]).filter((key) => given[key] === undefined);
  // Production runs without an operator token (the operator API is then off); every other key is required.
  const required = absent.filter((key) => key !== 'adminToken' || sandbox);
  if (!sandbox && required.length > 0) throw new Error(`${required[0]} is required in production`);
  const kept = await keptSecrets(db, required);
  const take = (key: GeneratedKey): string => {
    const value = given[key] ?? kept.get(key);
    if (value === undefined) throw new Error(`the sandbox's ${key} could not be kept in the database`);
    return value;
  };
  const raw: RawKeys = {
    tokenSigningKey: take('tokenSigningKey'),
    appSecret: take('appSecret'),
    webhookEncryptionKey: take('webhookEncryptionKey'),
    adminToken: sandbox ? take('adminToken') : given.adminToken,
  };
  return { ...deriveServerKeys(config, raw), adminTokenGenerated: sandbox && config.adminToken === undefined };
}

/** Fresh in-memory keys, for tests and tools that never persist anything. */
export function generateServerKeys(config: Config, adminToken = generators.adminToken()): ServerKeys {
  return deriveServerKeys(config, {
    tokenSigningKey: configuredOr(config.keys.tokenSigningKey, generators.tokenSigningKey),
    appSecret: configuredOr(config.keys.appSecret, generators.appSecret),
    webhookEncryptionKey: configuredOr(config.keys.webhookEncryptionKey, generators.webhookEncryptionKey),
    adminToken: config.adminToken ?? adminToken,
  });
}

function configuredOr(value: string | undefined, generate: () => string): string {
  return value ?? generate();
}

function deriveServerKeys(config: Config, raw: RawKeys): ServerKeys {
  let tokenPrivateKey: KeyObject;
  try {
    tokenPrivateKey = createPrivateKey(raw.tokenSigningKey);
  } catch {
    throw new Error('TOKEN_SIGNING_KEY is not a readable private key (expected an Ed25519 key in PKCS#8 PEM)');
  }
  if (tokenPrivateKey.asymmetricKeyType !== 'ed25519') throw new Error('TOKEN_SIGNING_KEY must be an Ed25519 key');
  const tokenPublicKey = createPublicKey(tokenPrivateKey);
  const thumbprint = tokenPublicKey.export({ format: 'der', type: 'spki' }).toString('base64url').slice(-12);
  return Object.freeze({
    tokenPrivateKey,
    tokenPublicKey,
    tokenKeyId: `${config.environment}-${thumbprint}`,
    cursorKey: deriveKey(raw.appSecret, 'cursor'),
    webhookEncryptionKey: Buffer.from(raw.webhookEncryptionKey, 'base64'),
    legacyWebhookKey: deriveKey(raw.appSecret, 'legacy-webhook-signing'),
    adminToken: raw.adminToken,
  });
}
