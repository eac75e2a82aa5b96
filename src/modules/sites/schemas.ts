/** Sites (SPEC: Site): request bodies, attributes, and the resource as served. */
import { type Static, Type } from 'typebox';
import { ResourceSchema, SingleSchema, ListSchema } from '../../http/envelope.js';
import { PageQuery } from '../../http/pagination.js';
import { DateTime, Nullable, Text } from '../../http/schemas.js';

/** Maximum lengths (SPEC leaves them open; docs/decisions.md records them). */
export const SITE_LIMITS = {
  name: 200,
  siteCode: 100,
  addressLine: 200,
  city: 100,
  stateRegion: 100,
  postalCode: 20,
  country: 100,
  uniqueId: 100,
  friendlyLocationName: 200,
} as const;

const writable = {
  name: Text(SITE_LIMITS.name),
  siteCode: Text(SITE_LIMITS.siteCode, {
    description: "The client's stable site identifier; unique per client (case-sensitive).",
  }),
  addressLine1: Text(SITE_LIMITS.addressLine),
  addressLine2: Nullable(Text(SITE_LIMITS.addressLine)),
  city: Text(SITE_LIMITS.city),
  stateRegion: Text(SITE_LIMITS.stateRegion),
  postalCode: Text(SITE_LIMITS.postalCode, { description: 'A string, not a number.' }),
  country: Text(SITE_LIMITS.country),
  uniqueID: Nullable(Text(SITE_LIMITS.uniqueId, { description: 'Legacy identifier; exact-match filter on list.' })),
  uniqueID2: Nullable(
    Text(SITE_LIMITS.uniqueId, { description: 'Secondary legacy identifier; exact-match filter on list.' }),
  ),
  friendlyLocationName: Nullable(Text(SITE_LIMITS.friendlyLocationName, { description: 'Legacy.' })),
  friendlyLocationName2: Nullable(Text(SITE_LIMITS.friendlyLocationName, { description: 'Legacy.' })),
  keyRequired: Nullable(Type.Boolean()),
};

export const SiteCreateBody = Type.Object(
  {
    name: writable.name,
    siteCode: writable.siteCode,
    addressLine1: writable.addressLine1,
    addressLine2: Type.Optional(writable.addressLine2),
    city: writable.city,
    stateRegion: writable.stateRegion,
    postalCode: writable.postalCode,
    country: writable.country,
    uniqueID: Type.Optional(writable.uniqueID),
    uniqueID2: Type.Optional(writable.uniqueID2),
    friendlyLocationName: Type.Optional(writable.friendlyLocationName),
    friendlyLocationName2: Type.Optional(writable.friendlyLocationName2),
    keyRequired: Type.Optional(writable.keyRequired),
  },
  {
    additionalProperties: false,
    title: 'Site create body',
    description: 'Optional members also accept null, meaning no value.',
  },
);
export type SiteCreate = Static<typeof SiteCreateBody>;

export const SitePatchBody = Type.Partial(SiteCreateBody, {
  additionalProperties: false,
  title: 'Site patch body',
  description: 'Only supplied members change. Optional members accept null to clear them.',
});
export type SitePatch = Static<typeof SitePatchBody>;

export const SiteAttributes = Type.Object(
  {
    clientId: Type.String({ description: 'The tenant (client) identifier. Read-only.' }),
    status: Type.String({ description: 'Read-only. Active on create.', examples: ['Active'] }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
    name: Type.String(),
    siteCode: Type.String(),
    addressLine1: Type.String(),
    addressLine2: Type.Optional(Nullable(Type.String())),
    city: Type.String(),
    stateRegion: Type.String(),
    postalCode: Type.String(),
    country: Type.String(),
    uniqueID: Type.Optional(Nullable(Type.String())),
    uniqueID2: Type.Optional(Nullable(Type.String())),
    friendlyLocationName: Type.Optional(Nullable(Type.String())),
    friendlyLocationName2: Type.Optional(Nullable(Type.String())),
    keyRequired: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);
export type SiteAttributesValue = Static<typeof SiteAttributes>;

export const SiteResource = ResourceSchema('sites', SiteAttributes, { idPrefix: 'site_', title: 'Site' });
export const SiteDocument = SingleSchema(SiteResource);
export const SiteList = ListSchema(SiteResource);

export const SiteListQuery = Type.Object(
  {
    ...PageQuery,
    siteCode: Type.Optional(Text(SITE_LIMITS.siteCode, { description: 'Exact, case-sensitive match.' })),
    uniqueID: Type.Optional(Text(SITE_LIMITS.uniqueId, { description: 'Exact, case-sensitive match.' })),
    uniqueID2: Type.Optional(Text(SITE_LIMITS.uniqueId, { description: 'Exact, case-sensitive match.' })),
  },
  { additionalProperties: false, description: 'At most one of siteCode, uniqueID and uniqueID2.' },
);
export type SiteListQueryValue = Static<typeof SiteListQuery>;
