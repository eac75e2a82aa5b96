/** Server keys a production configuration requires, freshly generated (pure: no application, no database). */
import { generateKeyPairSync, randomBytes } from 'node:crypto';

export function ed25519Pem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** TOKEN_SIGNING_KEY (with `\n` escapes, as an environment file holds it), APP_SECRET, WEBHOOK_ENCRYPTION_KEY. */
export const productionKeys = () => ({
  TOKEN_SIGNING_KEY: ed25519Pem().replace(/\n/g, '\\n'),
  APP_SECRET: randomBytes(36).toString('base64'),
  WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
});
