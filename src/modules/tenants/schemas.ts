/** Operator API shapes for tenants and their credential pairs (an exact contract: see the issue). */
import { type Static, Type } from 'typebox';
import { DateTime, Text } from '../../http/schemas.js';
import { ALL_SCOPES } from '../auth/scopes.js';

export const ScopeList = Type.Array(Type.Union(ALL_SCOPES.map((scope) => Type.Literal(scope))), {
  maxItems: ALL_SCOPES.length,
  uniqueItems: true,
  description: 'Scopes the tenant may request, each at most once; defaults to all six.',
});

export const TenantCreateBody = Type.Object(
  {
    name: Text(200),
    scopes: Type.Optional(ScopeList),
    apiEnabled: Type.Optional(
      Type.Boolean({
        description: 'Publish lifecycle events other than ticket.created (with webhookAccess). Default true.',
      }),
    ),
    webhookAccess: Type.Optional(
      Type.Boolean({ description: 'May create and patch webhook subscriptions. Default true.' }),
    ),
  },
  { additionalProperties: false },
);
export type TenantCreate = Static<typeof TenantCreateBody>;

export const TenantPatchBody = Type.Partial(TenantCreateBody, { additionalProperties: false });
export type TenantPatch = Static<typeof TenantPatchBody>;

export const CredentialPair = Type.Object(
  {
    client_id: Type.String(),
    client_secret: Type.String({ description: 'Shown once; only its hash is stored.' }),
  },
  { additionalProperties: false },
);

export const Tenant = Type.Object(
  {
    tenantId: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    apiEnabled: Type.Boolean(),
    webhookAccess: Type.Boolean(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);
export type TenantValue = Static<typeof Tenant>;

export const TenantWithCredentials = Type.Object(
  { ...Tenant.properties, credentials: CredentialPair },
  { additionalProperties: false },
);

export const CredentialSummary = Type.Object(
  { client_id: Type.String(), createdAt: DateTime(), revokedAt: Type.Union([DateTime(), Type.Null()]) },
  { additionalProperties: false },
);

export const TenantParams = Type.Object({ tenantId: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
export const CredentialParams = Type.Object(
  { tenantId: Type.String({ maxLength: 100 }), client_id: Type.String({ maxLength: 200 }) },
  { additionalProperties: false },
);
