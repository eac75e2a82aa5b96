/**
 * The examples the documents show with each named schema: one client's story (a site, a visit at it with
 * a return label, a message with an attachment, a webhook subscription and the visit's events). Each is
 * checked against its schema (tests/openapi/document.test.ts, and the linters' example rules), and they
 * agree with each other as real responses and deliveries would (tests/openapi/example-story.test.ts).
 */
import { EVENT_TYPES, type EventType, PAYLOAD_VERSION } from '../outbox/types.js';

export const CLIENT_ID = 'tnt_3d7f9k2m4q6s8v0x1z3b5c7e9g';
const SITE_ID = 'site_5k2x8m4q7b1c9d3f6g0h2j4n6p';
const VISIT_ID = 'visit_9p4t7w2y5a8c1e3g6j0k2m4q7s';
const MESSAGE_ID = 'msg_2b5d8f1h4k7m0p3r6t9v2x5z8c';
const BASE = 'https://api.example.com';
export const CREATED = '2026-11-02T09:15:00.000Z';
const UPDATED = '2026-11-03T14:40:12.345Z';
/** When the story's files were uploaded: an upload is a change of its owner (version + 1, `updatedAt`). */
const UPLOADED = '2026-11-03T10:02:44.120Z';

/**
 * The visit's events in the order they happened, each with its own id (a receiver's deduplication key) and
 * time: ticket.created when the visit was created, then the operator's workflow, each action a new version.
 */
const EVENTS: Record<EventType, { id: string; occurredAt: string; data: Record<string, unknown> }> = {
  'ticket.created': { id: 'evt_2c6f0j4m8q1t5w9z3b7e1h5k9n', occurredAt: CREATED, data: { status: 'New' } },
  'rep.assigned': {
    id: 'evt_5g9k3n7r1u5x9a3d7g1j5m9q3t',
    occurredAt: '2026-11-05T16:20:31.204Z',
    data: { status: 'New', fieldRepName: 'Jordan Lee' },
  },
  'job.scheduled': {
    id: 'evt_8k2mq4x7b1c9d3f5g6h0j2n4p6',
    occurredAt: '2026-11-06T10:41:07.512Z',
    data: { status: 'Scheduled', scheduledDate: '2026-11-07', etaTime: '10:30' },
  },
  'schedule.updated': {
    id: 'evt_1b4d7g0j3m6p9s2v5y8a1c4f7h',
    occurredAt: '2026-11-06T15:12:09.871Z',
    data: { status: 'Scheduled', scheduledDate: '2026-11-07', etaTime: '13:00' },
  },
  'job.dispatched': {
    id: 'evt_6r0u4x8a2d6g0k4n8r2v6y0c4f',
    occurredAt: '2026-11-07T07:30:00.000Z',
    data: { status: 'Dispatched' },
  },
  'job.completed': {
    id: 'evt_3w7z1c5f9h3k7n1q5t9w3z7b1e',
    occurredAt: '2026-11-07T14:48:55.310Z',
    data: { status: 'Completed' },
  },
  'deliverables.transmitted': {
    id: 'evt_9e3h7k1n5q9t3w7z1c5f9j3m7p',
    occurredAt: '2026-11-07T15:02:17.644Z',
    data: { status: 'Completed', notes: 'Reader replaced; photos of the kiosk attached.' },
  },
};

const resourceMeta = (version: number) => ({ version, etag: `"${version}"` });

export const siteCreateExample = {
  name: 'Riverside Store',
  siteCode: 'STORE-0042',
  addressLine1: '12 Harbour Road',
  addressLine2: 'Unit 4',
  city: 'Portsmouth',
  stateRegion: 'Hampshire',
  postalCode: 'PO1 3AX',
  country: 'GB',
  uniqueID: 'LEGACY-7781',
  friendlyLocationName: 'Riverside',
  keyRequired: true,
};

export const sitePatchExample = { name: 'Riverside Superstore', addressLine2: null };

export const siteExample = {
  id: SITE_ID,
  type: 'sites',
  attributes: {
    clientId: CLIENT_ID,
    status: 'Active',
    createdAt: CREATED,
    updatedAt: UPDATED,
    ...siteCreateExample,
    uniqueID2: null,
    friendlyLocationName2: null,
  },
  meta: resourceMeta(2),
};

export const fileVersionExample = {
  version: 1,
  fileName: 'return-label.pdf',
  contentType: 'application/pdf',
  sizeBytes: 48213,
  uploadedAt: UPLOADED,
};

export const returnLabelExample = {
  url: `${BASE}/api/v1/site-visits/${VISIT_ID}/return-label`,
  versions: [fileVersionExample],
};

export const siteVisitAssetExample = {
  siteVisitAssetId: 1,
  siteAssetId: 184467213,
  uniqueId: 'DEMO-ASSET-1',
  friendlyLocation: 'Front entrance',
  assetStatus: 'Installed',
  assetDisplay: 'Kiosk A (front entrance)',
};

export const siteVisitCreateExample = {
  clientSiteId: 'STORE-0042',
  description: 'Replace the card reader of kiosk A',
  clientTicketNumber: 'TCK-2026-1187',
  serviceType: 'Break / Fix',
  jobInstructions: 'Ask for the store manager on arrival. Return the faulty reader with the enclosed label.',
  projectId: 12,
  itemName: 'Card reader',
  startDate: '2026-11-05T08:00:00.000Z',
  dueDate: '2026-11-07T17:00:00.000Z',
  arePartsRequired: true,
  trackingNumber: null,
  partsReturnRequired: true,
  siteAssetIds: [184467213],
  schedulingRule: 'Date Range',
};

export const siteVisitPatchExample = { dueDate: '2026-11-10T17:00:00.000Z', trackingNumber: '1Z999AA10123456784' };

const { siteAssetIds: _assigned, ...visitAttributes } = siteVisitCreateExample;

export const siteVisitExample = {
  id: VISIT_ID,
  type: 'site-visits',
  attributes: {
    clientId: CLIENT_ID,
    status: 'Scheduled',
    createdAt: CREATED,
    // Shown as job.scheduled left it: created (1), its label uploaded (2), a rep assigned (3), scheduled (4).
    updatedAt: EVENTS['job.scheduled'].occurredAt,
    ...visitAttributes,
    assetsToService: 'Kiosk A (front entrance) [DEMO-ASSET-1]',
    siteVisitAssets: [siteVisitAssetExample],
    returnLabel: returnLabelExample,
  },
  meta: resourceMeta(4),
};

export const messageCreateExample = {
  siteVisitId: VISIT_ID,
  type: 'Change Appointment',
  messageThread: 'The store opens at 10:00 on Thursday; please arrive after that.',
  urgency: 'High',
  buyer: false,
  clientContacts: true,
};

export const messagePatchExample = { status: 'Closed' };

export const messageExample = {
  id: MESSAGE_ID,
  type: 'messages',
  attributes: {
    clientId: CLIENT_ID,
    status: 'Open',
    createdAt: CREATED,
    // Its attachment's upload was its one change since.
    updatedAt: UPLOADED,
    siteVisitId: VISIT_ID,
    type: 'Change Appointment',
    recordOwner: 'Client API',
    messageThread: messageCreateExample.messageThread,
    fileAttachment: {
      url: `${BASE}/api/v1/messages/${MESSAGE_ID}/file-attachment`,
      versions: [{ ...fileVersionExample, fileName: 'floor-plan.png', contentType: 'image/png', sizeBytes: 210344 }],
    },
    urgency: 'High \u2013 Needs attention soon',
    buyer: false,
    clientContacts: true,
    svcPm: true,
  },
  meta: resourceMeta(2),
};

export const projectExample = {
  id: '12',
  type: 'projects',
  attributes: { projectId: 12, projectName: 'Kiosk refresh 2026', status: 'Active' },
  meta: { upstreamRecordId: 'a0B5g00000XyZ12' },
};

export const itemExample = {
  id: '7',
  type: 'items',
  attributes: { itemId: 7, itemName: 'Card reader' },
  meta: {},
};

export const subscriptionCreateExample = {
  targetUrl: 'https://hooks.example.com/site-services',
  eventTypes: ['ticket.created', 'job.scheduled', 'job.completed'],
  secret: 'whsec-7a0f3c9e51b24d8aa6c2',
  description: 'Ticketing system',
};

export const subscriptionPatchExample = { eventTypes: [...EVENT_TYPES], isActive: true };

export const subscriptionExample = {
  id: 'whsub_6h1k4n7q0s3v6y9b2e5g8j1m4p',
  tenantId: CLIENT_ID,
  targetUrl: subscriptionCreateExample.targetUrl,
  description: subscriptionCreateExample.description,
  eventTypes: subscriptionCreateExample.eventTypes,
  isActive: true,
  signingVersion: 'v1',
  createdAt: CREATED,
  updatedAt: CREATED,
};

export const tokenExample = {
  access_token: 'eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjbGlfMDEifQ.c2lnbmF0dXJl',
  token_type: 'Bearer',
  expires_in: 3600,
  scope: 'sites:read sites:write site-visits:read site-visits:write webhooks:read webhooks:write',
};

export function problemExample(problemBaseUrl: string) {
  return {
    type: `${problemBaseUrl}/version-conflict`,
    title: 'Version conflict',
    status: 409,
    detail: 'If-Match "1" does not match the current ETag "2". Read the resource again and reapply your change.',
  };
}

export function validationProblemExample(problemBaseUrl: string) {
  return {
    type: `${problemBaseUrl}/validation-error`,
    title: 'Validation failed',
    status: 422,
    detail: 'The request has 2 invalid fields: siteCode, postalCode.',
    errors: { siteCode: ['is required'], postalCode: ['must be at most 20 characters'] },
  };
}

export function eventExample(type: EventType) {
  const { id, occurredAt, data } = EVENTS[type];
  return {
    id,
    type,
    occurredAt,
    resourceType: 'site-visits',
    resourceId: VISIT_ID,
    payloadVersion: PAYLOAD_VERSION,
    data: { clientTicketNumber: 'TCK-2026-1187', clientSiteId: 'STORE-0042', ...data },
  };
}
