/**
 * The operator's workflow of a visit (operator API: its actions and the visit as the operator sees it), and the
 * sandbox simulator's bodies, which take the same actions. The client API's shapes are in schemas.ts.
 */
import { type Static, Type } from 'typebox';
import { ResourceSchema, SingleSchema } from '../../http/envelope.js';
import { CalendarDate, DateTime, Nullable, Text, TimeOfDay } from '../../http/schemas.js';
import { FileObject } from '../files/schemas.js';
import { SiteVisitAttributes, SiteVisitResource } from './schemas.js';

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
    returnLabel: Type.Union([FileObject, Type.Null()], {
      description:
        "The return label; null before the first upload. Its url is the operator API's download (GET /admin/v1/site-visits/{visitId}/return-label), which the operator token opens.",
    }),
    fieldRepName: Nullable(
      Type.String({ description: 'The assigned field rep; null while none is (never assigned, or cleared).' }),
    ),
    scheduledDate: Nullable(CalendarDate('The scheduled date; null until the visit is scheduled.')),
    etaTime: Nullable(TimeOfDay('The expected arrival time; null when the schedule has none.')),
    dispatchedAt: Nullable(DateTime('When the visit was dispatched.')),
    completedAt: Nullable(DateTime('When the visit was completed.')),
    qualityReviewPassed: Nullable(
      Type.Boolean({
        description:
          'The quality review the completion recorded (complete takes only a passed one, so true once the visit is Completed); null before.',
      }),
    ),
    deliverablesTransmittedAt: Nullable(DateTime('When deliverables were last transmitted.')),
    deliverablesNotes: Nullable(
      Type.String({
        description:
          "The notes sent to the client with the last transmission (deliverablesTransmittedAt), as the deliverables.transmitted event carried them; null when that transmission had none, or before the first. Earlier transmissions' notes are in their events only.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type OperatorSiteVisitAttributesValue = Static<typeof OperatorSiteVisitAttributes>;

export const OperatorSiteVisitResource = ResourceSchema('site-visits', OperatorSiteVisitAttributes, {
  idPrefix: 'visit_',
  title: 'Site visit (operator view)',
});
export const OperatorSiteVisitDocument = SingleSchema(OperatorSiteVisitResource);

/** The path parameters of the operator's routes of one visit (`/admin/v1/site-visits/{visitId}…`). */
export const OperatorVisitParams = Type.Object(
  { visitId: Type.String({ maxLength: 100, description: "The visit's id (visit_ prefix)." }) },
  { additionalProperties: false },
);

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
