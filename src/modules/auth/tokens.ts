/**
 * Access tokens: JWTs signed with the environment's own Ed25519 key, typed `at+jwt` (RFC 9068), whose
 * issuer and audience name the environment, so a sandbox token is worthless in production and back.
 * Verification pins the algorithm, issuer, audience and type and ignores any key material a token
 * carries in its header (jwk, jku, x5u, kid): only our public key is ever used.
 */
import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { ServerKeys } from '../../runtime/server-keys.js';

export interface AccessToken {
  tenantId: string;
  clientId: string;
  scopes: string[];
  /** Expiry, in epoch milliseconds. */
  expiresAt: number;
}

/** Longest Authorization value considered; anything larger is refused before parsing. */
export const MAX_TOKEN_LENGTH = 4096;
const CACHE_LIMIT = 10_000;

export function tokenIssuer(config: Config): string {
  return `site-services/${config.environment}`;
}

export function tokenAudience(config: Config): string {
  return `site-services-api/${config.environment}`;
}

export class TokenService {
  /** Verified tokens by their text, so each token is verified once per process, not per request. */
  private readonly verified = new Map<string, AccessToken>();

  constructor(
    private readonly config: Config,
    private readonly keys: ServerKeys,
    private readonly clock: Clock,
  ) {}

  async issue(grant: {
    tenantId: string;
    clientId: string;
    scopes: string[];
  }): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const expiresIn = this.config.tokenTtlSeconds;
    const token = await new SignJWT({ tid: grant.tenantId, scope: grant.scopes.join(' '), client_id: grant.clientId })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: this.keys.tokenKeyId })
      .setIssuer(tokenIssuer(this.config))
      .setAudience(tokenAudience(this.config))
      .setSubject(grant.clientId)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + expiresIn)
      .setJti(randomUUID())
      .sign(this.keys.tokenPrivateKey);
    return { token, expiresIn };
  }

  /** The grant of a token verified before and still current, without waiting; undefined otherwise. */
  verifiedBefore(token: string): AccessToken | undefined {
    const cached = this.verified.get(token);
    return cached && cached.expiresAt > this.clock.now().getTime() ? cached : undefined;
  }

  /** The token's grant when it is genuine, current and ours; undefined otherwise (never throws). */
  async verify(token: string): Promise<AccessToken | undefined> {
    const current = this.verifiedBefore(token);
    if (current) return current;
    // Verified before and expired since: forgotten, and refused without verifying again.
    if (this.verified.delete(token)) return undefined;
    const nowMs = this.clock.now().getTime();
    if (token.length > MAX_TOKEN_LENGTH || !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) return undefined;
    try {
      const { payload } = await jwtVerify(token, this.keys.tokenPublicKey, {
        algorithms: ['EdDSA'],
        issuer: tokenIssuer(this.config),
        audience: tokenAudience(this.config),
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat', 'nbf', 'jti', 'sub', 'tid', 'scope'],
        currentDate: new Date(nowMs),
        clockTolerance: 5,
      });
      if (typeof payload.tid !== 'string' || typeof payload.scope !== 'string' || typeof payload.sub !== 'string')
        return undefined;
      const grant: AccessToken = {
        tenantId: payload.tid,
        clientId: payload.sub,
        scopes: payload.scope.split(' ').filter(Boolean),
        expiresAt: (payload.exp as number) * 1000,
      };
      this.remember(token, grant);
      return grant;
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) return undefined;
      // jose reports malformed input with its own errors; anything else is still a bad token, never a 500.
      return undefined;
    }
  }

  private remember(token: string, grant: AccessToken): void {
    if (this.verified.size >= CACHE_LIMIT) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, grant);
  }
}
