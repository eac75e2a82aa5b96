/**
 * What the route modules and long-lived parts share: configuration, the database, keys, the clock
 * and the few services that keep state across requests. Built once by buildApp and passed down
 * explicitly; nothing is reached through globals.
 */
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { AppDatabase } from './db/database.js';
import type { Database } from './db/schema.js';
import type { CursorCodec } from './http/pagination.js';
import type { RenderedResources } from './http/rendered-resources.js';
import type { Clock } from './lib/clock.js';
import type { CredentialStatus } from './modules/auth/credential-status.js';
import type { TokenService } from './modules/auth/tokens.js';
import type { DestinationPolicy } from './modules/outbox/destination-policy.js';
import type { FileStore } from './modules/files/store.js';
import type { ServerKeys } from './runtime/server-keys.js';

export interface AppContext {
  readonly config: Config;
  readonly database: AppDatabase;
  readonly db: Kysely<Database>;
  readonly keys: ServerKeys;
  readonly clock: Clock;
  readonly cursors: CursorCodec;
  /** The JSON of listed resources by id and version, which list pages render once. */
  readonly rendered: RenderedResources;
  readonly tokens: TokenService;
  readonly credentialStatus: CredentialStatus;
  /** The webhook destination policy (create, patch; the delivery worker has its own instance). */
  readonly destinations: DestinationPolicy;
  /** Where uploaded files live (return labels, attachments). */
  readonly files: FileStore;
}
