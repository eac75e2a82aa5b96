/** Operator API shapes for tenants and their credential pairs (an exact contract: see the issue). */
import { type Static, Type } from 'typebox';
import { DateTime, Text } from '../../http/schemas.js';
import { ALL_SCOPES } from '../auth/scopes.js';

export const ScopeList = Type.Array(Type.Union(ALL_SCOPES.map((scope) => Type.Literal(scope))), {
  maxItems: ALL_SCOPES.length,
  uniqueItems: true,
  description: 'Scopes the tenant may request, each at most once; defaults to all six.',
});

/** The cap on active webhook subscriptions a new tenant gets (Stripe allows 16 endpoints per account). */
export const DEFAULT_MAX_ACTIVE_SUBSCRIPTIONS = 16;
/** The highest cap the operator may set: a bound on a typo, not a sizing limit (fair delivery protects the others). */
export const MAX_MAX_ACTIVE_SUBSCRIPTIONS = 1000;

const MaxActiveSubscriptions = Type.Integer({
  minimum: 1,
  maximum: MAX_MAX_ACTIVE_SUBSCRIPTIONS,
  description: `How many active webhook subscriptions the tenant may have (default ${DEFAULT_MAX_ACTIVE_SUBSCRIPTIONS}). A client create, or a PATCH to isActive true, that would exceed it is 422 subscription-limit-reached; a tenant already over it (the cap lowered, or legacy subscriptions the operator added) keeps its subscriptions and their deliveries but can create or activate none until below it.`,
});

/** The storage limit's unit. */
export const BYTES_PER_MIB = 1_048_576;
/** What a new tenant's files may hold in all: 10 GiB, a thousand 10 MiB files. */
export const DEFAULT_STORAGE_LIMIT_MIB = 10_240;
/** The bounds the operator may set (the database checks them too): room for one file, and a bound on a typo. */
export const MIN_STORAGE_LIMIT_MIB = 10;
export const MAX_STORAGE_LIMIT_MIB = 10_485_760;

const StorageLimitMiB = Type.Integer({
  minimum: MIN_STORAGE_LIMIT_MIB,
  maximum: MAX_STORAGE_LIMIT_MIB,
  description: `How much the tenant's uploaded files may hold in all, every version of every return label and message attachment, in MiB (default ${DEFAULT_STORAGE_LIMIT_MIB}, 10 GiB). An upload that would exceed it is 422 storage-limit-reached and nothing of it is kept; a tenant already over it (the limit lowered) keeps its files but can upload none until the limit is raised.`,
});

export const TenantCreateBody = Type.Object(
  {
    name: Text(200, {
      description:
        'Stored as given. At least one character must be visible: a name of only white space or invisible characters (zero-width, bidi controls such as U+202E) is 422.',
    }),
    scopes: Type.Optional(ScopeList),
    apiEnabled: Type.Optional(
      Type.Boolean({
        description: 'Publish lifecycle events other than ticket.created (with webhookAccess). Default true.',
      }),
    ),
    webhookAccess: Type.Optional(
      Type.Boolean({ description: 'May create and patch webhook subscriptions. Default true.' }),
    ),
    maxActiveSubscriptions: Type.Optional(MaxActiveSubscriptions),
    storageLimitMiB: Type.Optional(StorageLimitMiB),
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
    id: Type.String({
      description: "The tenant's id: {tenantId} in the operator API's paths, tenantId in deliveries and events.",
    }),
    tenantId: Type.String({
      deprecated: true,
      description:
        'Deprecated: the same value as id (the member every other resource names its id by), kept for clients written before id was added. Read id.',
    }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    apiEnabled: Type.Boolean(),
    webhookAccess: Type.Boolean(),
    maxActiveSubscriptions: MaxActiveSubscriptions,
    storageLimitMiB: StorageLimitMiB,
    storageUsedBytes: Type.Integer({
      minimum: 0,
      description:
        "What the tenant's uploaded files hold now, every version counted, in bytes (read-only; against storageLimitMiB × 1048576).",
    }),
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
