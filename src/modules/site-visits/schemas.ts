/** Site visits (SPEC: Site visit): request bodies, attributes, and the resource as served. */
import { type Static, Type } from 'typebox';
import { ListSchema, ResourceSchema, SingleSchema } from '../../http/envelope.js';
import { PageQuery } from '../../http/pagination.js';
import { CalendarDate, DateTime, DateTimeInput, Nullable, StringEnum, Text, TimeOfDay } from '../../http/schemas.js';
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

// ---------------------------------------------------------------------------------------------
// The operator's workflow (operator API; issue 10's sandbox simulator takes the same actions)

export const WORKFLOW_LIMITS = { fieldRepName: 200, notes: 10000 } as const;

/** What rep.assigned reports when the rep is cleared; not a name a rep can be given. */
export const AWAITING_REASSIGNMENT = 'Awaiting reassignment';

const AssignRepAction = Type.Object(
  {
    action: Type.Literal('assign-rep'),
    fieldRepName: Nullable(
      Text(WORKFLOW_LIMITS.fieldRepName, {
        description: `The field rep's name only, never contact details; null clears the assignment (rep.assigned then reports "${AWAITING_REASSIGNMENT}").`,
        examples: ['Jordan Lee'],
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'assign-rep',
    description:
      'Assigns (or clears) the field rep → rep.assigned. Allowed until the visit is Completed; the current name again changes nothing.',
  },
);

const ScheduleAction = Type.Object(
  {
    action: Type.Literal('schedule'),
    scheduledDate: CalendarDate('The scheduled date, YYYY-MM-DD (a date that exists).'),
    etaTime: Type.Optional(Nullable(TimeOfDay('Expected arrival time HH:MM, 00:00 to 23:59; absent or null: no ETA.'))),
  },
  {
    additionalProperties: false,
    title: 'schedule',
    description:
      'Enters the whole schedule (date and ETA). On a New visit: status Scheduled → job.scheduled. On a Scheduled visit: schedule.updated when the date or ETA differs, nothing when both are the same. After dispatch: 409.',
  },
);

const DispatchAction = Type.Object(
  { action: Type.Literal('dispatch') },
  {
    additionalProperties: false,
    title: 'dispatch',
    description: 'Scheduled → Dispatched → job.dispatched; 409 in any other status.',
  },
);

const CompleteAction = Type.Object(
  {
    action: Type.Literal('complete'),
    qualityReviewPassed: Type.Literal(true, {
      description: 'Must be true: a visit is completed only after its quality review passed.',
    }),
  },
  {
    additionalProperties: false,
    title: 'complete',
    description: 'Dispatched → Completed → job.completed; 409 in any other status.',
  },
);

const TransmitDeliverablesAction = Type.Object(
  {
    action: Type.Literal('transmit-deliverables'),
    notes: Type.Optional(
      Nullable(
        Text(WORKFLOW_LIMITS.notes, {
          description: "The field rep's notes sent with the deliverables; absent or null: none.",
        }),
      ),
    ),
  },
  {
    additionalProperties: false,
    title: 'transmit-deliverables',
    description:
      "Records a transmission of the field rep's deliverables → deliverables.transmitted. Allowed once the visit is Dispatched or Completed, as often as deliverables are sent.",
  },
);

export const WORKFLOW_ACTIONS = [
  AssignRepAction,
  ScheduleAction,
  DispatchAction,
  CompleteAction,
  TransmitDeliverablesAction,
] as const;

export type WorkflowAction =
  | Static<typeof AssignRepAction>
  | Static<typeof ScheduleAction>
  | Static<typeof DispatchAction>
  | Static<typeof CompleteAction>
  | Static<typeof TransmitDeliverablesAction>;

export type WorkflowActionName = WorkflowAction['action'];

/**
 * One action, chosen by `action` (OpenAPI's discriminator): the body is validated as that action only, so
 * an unknown action or a member the action does not take is a 422 naming it.
 */
export const WorkflowActionBody = Type.Unsafe<WorkflowAction>({
  type: 'object',
  title: 'Workflow action',
  required: ['action'],
  discriminator: { propertyName: 'action' },
  oneOf: WORKFLOW_ACTIONS,
});

/** The visit as the operator sees it: the client's attributes and the workflow's own fields. */
export const OperatorSiteVisitAttributes = Type.Object(
  {
    ...SiteVisitAttributes.properties,
    fieldRepName: Nullable(
      Type.String({ description: 'The assigned field rep; null while none is (never assigned, or cleared).' }),
    ),
    scheduledDate: Nullable(CalendarDate('The scheduled date; null until the visit is scheduled.')),
    etaTime: Nullable(TimeOfDay('The expected arrival time; null when the schedule has none.')),
    dispatchedAt: Nullable(DateTime('When the visit was dispatched.')),
    completedAt: Nullable(DateTime('When the visit was completed.')),
    deliverablesTransmittedAt: Nullable(DateTime('When deliverables were last transmitted.')),
  },
  { additionalProperties: false },
);
export type OperatorSiteVisitAttributesValue = Static<typeof OperatorSiteVisitAttributes>;

export const OperatorSiteVisitResource = ResourceSchema('site-visits', OperatorSiteVisitAttributes, {
  idPrefix: 'visit_',
  title: 'Site visit (operator view)',
});
export const OperatorSiteVisitDocument = SingleSchema(OperatorSiteVisitResource);

// ---------------------------------------------------------------------------------------------
// Sandbox simulator (POST /api/v1/sandbox/site-visits/{id}/simulate)

const CompleteLifecycleAction = Type.Object(
  { action: Type.Literal('complete-lifecycle') },
  {
    additionalProperties: false,
    title: 'complete-lifecycle',
    description:
      'On a New visit: assign-rep, schedule, a schedule change, dispatch, complete and transmit-deliverables, in one transaction, each recording its event (rep.assigned, job.scheduled, schedule.updated, job.dispatched, job.completed, deliverables.transmitted). 409 on a visit that is not New.',
  },
);

export type SimulatedAction = WorkflowAction | Static<typeof CompleteLifecycleAction>;

/** One operator workflow action (the same shapes as the operator route), or the whole lifecycle at once. */
export const SimulateBody = Type.Unsafe<SimulatedAction>({
  type: 'object',
  title: 'Simulated action',
  required: ['action'],
  discriminator: { propertyName: 'action' },
  oneOf: [...WORKFLOW_ACTIONS, CompleteLifecycleAction],
});

export const SimulatedEvent = Type.Object(
  {
    id: Type.String({ description: 'The event id: the `id` of the webhook body your receiver gets.' }),
    type: Type.String({ examples: ['job.scheduled'] }),
    occurredAt: DateTime(),
  },
  { additionalProperties: false },
);

export const SimulateResponse = Type.Object(
  {
    data: SiteVisitResource,
    meta: Type.Object(
      {
        events: Type.Array(SimulatedEvent, {
          description: 'The events recorded, in order; empty when the action changed nothing.',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
