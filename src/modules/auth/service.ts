/** The client-credentials grant (SPEC: Authentication, Token). */
import type { Kysely } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { Database } from '../../db/schema.js';
import { hasSecretShape, newId, newSecret } from '../../lib/ids.js';
import { hashSecret, verifySecret } from '../../lib/secrets.js';
import { boundedDetail, Problem } from '../../http/problem.js';
import { nameOrWhy } from '../../http/request-names.js';
import type { ProblemSlug } from '../../http/problem-types.js';
import * as repository from './repository.js';
import { isScope } from './scopes.js';
import type { TokenService } from './tokens.js';

export interface TokenRequest {
  grantType: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  scope: string | undefined;
  /** The client authenticated with HTTP Basic (its 401 then names that scheme). */
  viaBasic: boolean;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** The most unknown scopes an invalid_scope error names; it counts the others. */
const SCOPES_SHOWN = 5;

/** An OAuth error (RFC 6749 §5.2) carried as a problem: both member sets reach the client. */
export function oauthProblem(
  slug: ProblemSlug,
  error: string,
  description: string,
  headers?: Record<string, string>,
): Problem {
  // The OAuth description is the problem's detail, bounded as it is.
  const detail = boundedDetail(description);
  return new Problem(slug, detail, {
    extensions: { error, error_description: detail },
    ...(headers ? { headers } : {}),
  });
}

/** Client secrets are `secret_` and 256 random bits (newSecret); nothing else is one. */
const CLIENT_SECRET_PREFIX = 'secret';

function invalidClient(request: TokenRequest): Problem {
  return oauthProblem(
    'unauthorized',
    'invalid_client',
    'Client authentication failed: unknown client_id or wrong client_secret.',
    // RFC 6749 §5.2: a client that tried the Authorization header is told the scheme it used (RFC 7617).
    request.viaBasic ? { 'www-authenticate': 'Basic realm="site-services", charset="UTF-8"' } : undefined,
  );
}

export async function grantClientCredentials(
  db: Kysely<Database>,
  tokens: TokenService,
  request: TokenRequest,
): Promise<TokenResponse> {
  if (request.grantType === undefined)
    throw oauthProblem('malformed-request', 'invalid_request', 'grant_type is required.');
  if (request.grantType !== 'client_credentials') {
    throw oauthProblem(
      'malformed-request',
      'unsupported_grant_type',
      'Only the client_credentials grant is supported.',
    );
  }
  if (!request.clientId || !request.clientSecret) {
    throw oauthProblem('malformed-request', 'invalid_request', 'client_id and client_secret are required.');
  }
  const requested = request.scope === undefined ? undefined : request.scope.split(' ').filter(Boolean);
  const unknown = requested?.filter((scope) => !isScope(scope)) ?? [];
  if (unknown.length > 0) {
    // Each by the rule of request-names.ts, the first few: a scope parameter may hold thousands.
    const shown = unknown.slice(0, SCOPES_SHOWN).map((scope) => nameOrWhy(scope, 'a scope'));
    const more = unknown.length > SCOPES_SHOWN ? ` and ${unknown.length - SCOPES_SHOWN} more` : '';
    throw oauthProblem('malformed-request', 'invalid_scope', `Unknown scope: ${shown.join(', ')}${more}.`);
  }

  // A secret the service could not have generated is refused before any lookup: the answer is the same
  // whatever the client id, and it costs no hash.
  if (!hasSecretShape(CLIENT_SECRET_PREFIX, request.clientSecret)) throw invalidClient(request);
  const credential = await repository.findActiveCredential(db, request.clientId);
  // verifySecret spends the same time on an unknown client as on a wrong secret (a decoy hash).
  const check = await verifySecret(request.clientSecret, credential?.secretHash);
  if (!credential || !check.valid) throw invalidClient(request);
  if (check.upgradedHash !== undefined) {
    // A legacy scrypt hash is replaced once its secret matched, if it is still the one read: requests verifying
    // it at once all compute the same hash, and the first write wins.
    await repository.replaceSecretHash(db, credential, check.upgradedHash);
  }

  const allowed = credential.tenantScopes;
  const beyond = requested?.filter((scope) => !allowed.includes(scope)) ?? [];
  if (beyond.length > 0) {
    throw oauthProblem(
      'malformed-request',
      'invalid_scope',
      `Scope not allowed for this client: ${beyond.join(', ')}.`,
    );
  }
  const scopes = requested && requested.length > 0 ? [...new Set(requested)] : allowed;
  if (scopes.length === 0)
    throw oauthProblem('malformed-request', 'invalid_scope', 'This client has no scopes granted.');

  const { token, expiresIn } = await tokens.issue({
    tenantId: credential.tenantId,
    clientId: credential.clientId,
    scopes,
  });
  return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: scopes.join(' ') };
}

// A tenant's credential pairs, as the operator manages them through the tenants module.

export interface CredentialPair {
  client_id: string;
  client_secret: string;
}

/** A new pair; its secret has the shape the grant accepts. */
export function newCredentialPair(): CredentialPair {
  return { client_id: newId('cli'), client_secret: newSecret(CLIENT_SECRET_PREFIX) };
}

/** Stores a new pair (its secret as the hash the grant verifies). */
export function insertCredential(tx: Executor, tenantId: string, pair: CredentialPair, now: Date) {
  return repository.insertCredential(tx, tenantId, pair.client_id, hashSecret(pair.client_secret), now);
}

/** The tenant's pairs, oldest first, revoked ones included. */
export function listCredentials(db: Executor, tenantId: string) {
  return repository.listCredentials(db, tenantId);
}

/** Revokes a pair; false when the tenant has no such active pair. */
export function revokeCredential(tx: Executor, tenantId: string, clientId: string, now: Date): Promise<boolean> {
  return repository.revokeCredential(tx, tenantId, clientId, now);
}
