/** Forged access tokens for the token attacks (tests/auth and the JWT reliability suite). */
import { createHmac, type KeyObject, randomUUID, sign } from 'node:crypto';

export const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Valid sandbox claims for a tenant's credential, as the service would issue them; override to break one. */
export function accessClaims(
  tenant: { clientId: string; tenantId: string },
  nowSeconds: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    iss: 'site-services/sandbox',
    aud: 'site-services-api/sandbox',
    sub: tenant.clientId,
    tid: tenant.tenantId,
    scope: 'sites:read sites:write',
    jti: randomUUID(),
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + 600,
    ...overrides,
  };
}

/** A compact JWS signed by hand: EdDSA with `key`, HS256 with `secret`, or unsigned. */
export function forgeJwt(
  payload: Record<string, unknown>,
  options: { header?: Record<string, unknown>; key?: KeyObject; secret?: Buffer | string } = {},
): string {
  const header = options.header ?? { alg: options.secret ? 'HS256' : 'EdDSA', typ: 'at+jwt' };
  const input = `${b64(header)}.${b64(payload)}`;
  if (options.secret !== undefined)
    return `${input}.${createHmac('sha256', options.secret).update(input).digest('base64url')}`;
  if (options.key) return `${input}.${sign(null, Buffer.from(input), options.key).toString('base64url')}`;
  return `${input}.`;
}
