/** POST /api/v1/oauth/token: the OAuth 2.0 client-credentials grant, JSON or form-encoded. */
import formbody from '@fastify/formbody';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { noStoreHeaders } from '../../http/headers.js';
import { parseQueryString } from '../../http/query-string.js';
import { unstorableText } from '../../http/request-values.js';
import { OAuthProblemSchema } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { ALL_SCOPES } from './scopes.js';
import { grantClientCredentials, oauthProblem, type TokenRequest } from './service.js';

export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.Literal('client_credentials'),
    client_id: Type.String(),
    client_secret: Type.String(),
    scope: Type.Optional(
      Type.String({
        description: `Space-separated subset of the client's scopes (${ALL_SCOPES.join(', ')}); all allowed scopes when omitted.`,
      }),
    ),
  },
  { additionalProperties: true, description: 'Unrecognised parameters are ignored, as RFC 6749 §3.2 requires.' },
);

export const TokenResponseBody = Type.Object(
  {
    access_token: Type.String({ description: 'A JWT; send it as Authorization: Bearer <access_token>.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the token expires (TOKEN_TTL_SECONDS).' }),
    scope: Type.String({ description: 'The scopes granted, space-separated.' }),
  },
  { additionalProperties: false },
);

/** Reads one OAuth parameter: a string, or absent; repeated or non-string values are malformed (RFC 6749 §3.2). */
function parameter(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw oauthProblem('malformed-request', 'invalid_request', `${name} must be a single string.`);
  return value;
}

/** Client credentials from the body, or from HTTP Basic (RFC 6749 §2.3.1); never both. */
function tokenRequest(request: FastifyRequest): TokenRequest {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw oauthProblem(
      'malformed-request',
      'invalid_request',
      'The token request must be a JSON object or a form-encoded body.',
    );
  }
  const fields = body as Record<string, unknown>;
  let clientId = parameter(fields, 'client_id');
  let clientSecret = parameter(fields, 'client_secret');
  const basic = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(request.headers.authorization ?? '');
  if (basic) {
    if (clientSecret !== undefined) {
      throw oauthProblem(
        'malformed-request',
        'invalid_request',
        'Use one client authentication method: the body or HTTP Basic, not both.',
      );
    }
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw oauthProblem('malformed-request', 'invalid_request', 'Malformed HTTP Basic credentials.');
    let basicId: string;
    try {
      basicId = decodeURIComponent(decoded.slice(0, colon));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1));
    } catch {
      throw oauthProblem('malformed-request', 'invalid_request', 'Malformed HTTP Basic credentials.');
    }
    // A client_id in the body may accompany Basic (RFC 6749 §2.3.1), but it must name the same client.
    if (clientId !== undefined && clientId !== basicId) {
      throw oauthProblem(
        'malformed-request',
        'invalid_request',
        'client_id in the body differs from the HTTP Basic client.',
      );
    }
    clientId = basicId;
  }
  const parsed = {
    grantType: parameter(fields, 'grant_type'),
    clientId,
    clientSecret,
    scope: parameter(fields, 'scope'),
  };
  // No credential or grant holds U+0000 or text that is not Unicode, and no database text can: refuse it as
  // malformed, not fail on it.
  for (const value of Object.values(parsed)) {
    const reason = value === undefined ? undefined : unstorableText(value);
    if (reason !== undefined)
      throw oauthProblem('malformed-request', 'invalid_request', `The token request's parameters ${reason}.`);
  }
  return { ...parsed, viaBasic: basic !== null };
}

export async function registerTokenRoute(app: Api, ctx: AppContext): Promise<void> {
  // Form bodies are accepted on this route only: the plugin is encapsulated in this context.
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 16 * 1024, parser: parseQueryString });
    scope.post(
      '/api/v1/oauth/token',
      {
        config: { oauthErrors: true },
        // The body is checked by hand so that each failure gets its OAuth error code.
        validatorCompiler: () => () => true,
        bodyLimit: 16 * 1024,
        schema: {
          operationId: 'createToken',
          summary: 'Obtain an access token (client credentials)',
          description:
            'OAuth 2.0 client-credentials grant. Send client_id and client_secret in the body (JSON or form-encoded) or as HTTP Basic. Errors carry the problem members and the OAuth members error and error_description, as application/json.',
          tags: ['Authentication'],
          security: [],
          body: {
            content: {
              'application/x-www-form-urlencoded': { schema: TokenRequestBody },
              'application/json': { schema: TokenRequestBody },
            },
          },
          response: {
            200: { ...TokenResponseBody, headers: noStoreHeaders },
            400: {
              ...OAuthProblemSchema,
              description: 'Malformed token request (invalid_request, unsupported_grant_type, invalid_scope).',
            },
            401: {
              ...OAuthProblemSchema,
              description: 'Bad client credentials (invalid_client).',
              headers: Type.Object({
                'www-authenticate': Type.Optional(
                  Type.Literal('Basic realm="site-services", charset="UTF-8"', {
                    description: 'Present when the client authenticated with HTTP Basic (RFC 6749 §5.2).',
                  }),
                ),
              }),
            },
            415: { ...OAuthProblemSchema, description: 'Body neither JSON nor form-encoded.' },
            429: {
              ...OAuthProblemSchema,
              description: 'Rate limit exceeded (temporarily_unavailable); wait Retry-After seconds.',
            },
          },
        },
      },
      async (request, reply) => {
        const response = await grantClientCredentials(ctx.db, ctx.tokens, tokenRequest(request));
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(response);
      },
    );
  });
}
