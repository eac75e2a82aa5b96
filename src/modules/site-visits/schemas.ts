/**
 * Site visits (SPEC: Site visit): the client API's request bodies, attributes, and the resource as served. The
 * operator's workflow and the sandbox simulator's shapes are in workflow-schemas.ts.
 */
import { type Static, Type } from 'typebox';
import { ListSchema, ResourceSchema, SingleSchema } from '../../http/envelope.js';
import { PageQuery } from '../../http/pagination.js';
import { DateTime, DateTimeInput, Nullable, StringEnum, Text } from '../../http/schemas.js';
import { FileObject } from '../files/schemas.js';
import { ReferenceId } from '../reference/schemas.js';
import { SITE_LIMITS } from '../sites/schemas.js';

export const SERVICE_TYPES = [
  'Regular Service',
  'Preventative Maintenance',
  'Bonus',
  'Break / Fix',
  'Survey',
  'Site Prep',
  'Installation',
  'Relocation',
  'Removal',
  'Swap',
  'Audit',
  'Storage',
  'W/G Service',
  'Transport',
  'Machine Prep',
  'Sign/Wrap',
  'Inventory',
  'Delivery Acceptance',
  'Delivery/Inventory',
  'Install Revisit',
  'Secret Shopper',
  'Recycling',
  'Training',
] as const;

export const SCHEDULING_RULES = ['Date/Time Specific', 'Date Specific', 'Date Range'] as const;

/** Maximum lengths (SPEC leaves them open; docs/decisions.md records them). */
export const VISIT_LIMITS = {
  description: 2000,
  jobInstructions: 10000,
  clientTicketNumber: 100,
  trackingNumber: 100,
  itemName: 200,
  siteAssetIds: 200,
} as const;

/** Site-asset ids are PostgreSQL integers; anything outside cannot name one. */
const MAX_SITE_ASSET_ID = 2_147_483_647;

const writable = {
  clientSiteId: Text(SITE_LIMITS.siteCode, { description: 'The siteCode of one of your sites.' }),
  description: Text(VISIT_LIMITS.description),
  clientTicketNumber: Nullable(
    Text(VISIT_LIMITS.clientTicketNumber, {
      description: 'Your own ticket reference; unique per client when supplied (case-sensitive).',
    }),
  ),
  serviceType: StringEnum(SERVICE_TYPES, { description: 'One of the 23 service types.' }),
  jobInstructions: Text(VISIT_LIMITS.jobInstructions),
  projectId: ReferenceId('One of your Active projects (GET /api/v1/projects); 12 and "12" name the same project.'),
  itemName: Text(VISIT_LIMITS.itemName, { description: 'One of your items (GET /api/v1/items).' }),
  startDate: DateTimeInput('ISO 8601 date-time with a time zone.'),
  dueDate: DateTimeInput('ISO 8601 date-time with a time zone; not before startDate.'),
  arePartsRequired: Type.Boolean(),
  trackingNumber: Nullable(Text(VISIT_LIMITS.trackingNumber)),
  partsReturnRequired: Nullable(Type.Boolean()),
  siteAssetIds: Type.Array(Type.Integer({ minimum: 1, maximum: MAX_SITE_ASSET_ID }), {
    maxItems: VISIT_LIMITS.siteAssetIds,
    description:
      "Write-only. Site assets of the visit's site to assign; a duplicate counts once. On PATCH, omitted leaves the assignment unchanged and [] clears it.",
  }),
  schedulingRule: StringEnum(SCHEDULING_RULES),
};

export const SiteVisitCreateBody = Type.Object(
  {
    clientSiteId: writable.clientSiteId,
    description: writable.description,
    clientTicketNumber: Type.Optional(writable.clientTicketNumber),
    serviceType: writable.serviceType,
    jobInstructions: writable.jobInstructions,
    projectId: writable.projectId,
    itemName: writable.itemName,
    startDate: writable.startDate,
    dueDate: writable.dueDate,
    arePartsRequired: writable.arePartsRequired,
    trackingNumber: Type.Optional(writable.trackingNumber),
    partsReturnRequired: Type.Optional(writable.partsReturnRequired),
    siteAssetIds: Type.Optional(writable.siteAssetIds),
    schedulingRule: writable.schedulingRule,
  },
  {
    additionalProperties: false,
    title: 'Site visit create body',
    description: 'Optional members also accept null, meaning no value (except siteAssetIds: send [] for none).',
  },
);
export type SiteVisitCreate = Static<typeof SiteVisitCreateBody>;

export const SiteVisitPatchBody = Type.Partial(SiteVisitCreateBody, {
  additionalProperties: false,
  title: 'Site visit patch body',
  description:
    'Only supplied members change. Optional members accept null to clear them; siteAssetIds [] clears the assignment.',
});
export type SiteVisitPatch = Static<typeof SiteVisitPatchBody>;

export const SiteVisitAsset = Type.Object(
  {
    siteVisitAssetId: Type.Integer({ description: "The assignment's own id; stable while the asset stays assigned." }),
    siteAssetId: Type.Integer(),
    uniqueId: Type.String(),
    friendlyLocation: Type.String(),
    assetStatus: Type.String(),
    assetDisplay: Type.String(),
  },
  { additionalProperties: false },
);
export type SiteVisitAssetValue = Static<typeof SiteVisitAsset>;

export const SiteVisitAttributes = Type.Object(
  {
    clientId: Type.String({ description: 'The tenant (client) identifier. Read-only.' }),
    status: Type.String({
      description: 'Read-only. New on create; the operator moves it on (Scheduled, Dispatched, Completed).',
      examples: ['New'],
    }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
    clientSiteId: Type.String({ description: "The current siteCode of the visit's site." }),
    description: Type.String(),
    clientTicketNumber: Nullable(Type.String()),
    serviceType: Type.String(),
    jobInstructions: Type.String(),
    projectId: Type.Union([Type.Integer(), Type.String()], {
      description: 'In the form the project was created with.',
    }),
    itemName: Type.String(),
    startDate: DateTime(),
    dueDate: DateTime(),
    arePartsRequired: Type.Boolean(),
    trackingNumber: Nullable(Type.String()),
    partsReturnRequired: Nullable(Type.Boolean()),
    schedulingRule: Type.String(),
    assetsToService: Type.Optional(
      Type.String({
        description:
          'Needs site-visits:read (absent otherwise). The assigned assets as "assetDisplay [uniqueId]" joined by "; ", in assignment order; "" when none.',
        examples: ['Kiosk A (front entrance) [DEMO-ASSET-1]; Kiosk B (checkout) [DEMO-ASSET-2]'],
      }),
    ),
    siteVisitAssets: Type.Optional(
      Type.Array(SiteVisitAsset, { description: 'Needs site-visits:read (absent otherwise). The assigned assets.' }),
    ),
    returnLabel: Type.Union([FileObject, Type.Null()], {
      description: 'The return label; null before the first upload.',
    }),
  },
  { additionalProperties: false },
);
export type SiteVisitAttributesValue = Static<typeof SiteVisitAttributes>;

export const SiteVisitResource = ResourceSchema('site-visits', SiteVisitAttributes, {
  idPrefix: 'visit_',
  title: 'Site visit',
});
export const SiteVisitDocument = SingleSchema(SiteVisitResource);
export const SiteVisitList = ListSchema(SiteVisitResource);

export const SiteVisitListQuery = Type.Object(
  {
    ...PageQuery,
    clientTicketNumber: Type.Optional(
      Text(VISIT_LIMITS.clientTicketNumber, {
        description: 'Exact, case-sensitive match: the visit with your ticket reference, in the list form.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SiteVisitListQueryValue = Static<typeof SiteVisitListQuery>;

export const ReturnLabelUpload = SingleSchema(
  Type.Object(
    { siteVisitId: Type.String({ description: "The visit's id (visit_ prefix)." }), returnLabel: FileObject },
    { additionalProperties: false, title: 'Return-label upload response' },
  ),
);
