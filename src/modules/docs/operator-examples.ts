/**
 * The examples of the operator document's named schemas, continuing the client's story of examples.ts
 * (the same tenant, site and visit). Checked against their schemas by tests/openapi/document.test.ts.
 */
import {
  CLIENT_ID,
  CREATED,
  messageExample,
  siteVisitAssetExample,
  siteVisitExample,
  subscriptionExample,
} from './examples.js';

export const tenantCreateExample = { name: 'Northwind Retail', webhookAccess: true };

export const tenantExample = {
  id: CLIENT_ID,
  tenantId: CLIENT_ID,
  name: 'Northwind Retail',
  scopes: ['sites:read', 'sites:write', 'site-visits:read', 'site-visits:write', 'webhooks:read', 'webhooks:write'],
  apiEnabled: true,
  webhookAccess: true,
  maxActiveSubscriptions: 16,
  storageLimitMiB: 10240,
  storageUsedBytes: 52428800,
  createdAt: CREATED,
  updatedAt: CREATED,
};

export const credentialPairExample = {
  client_id: 'cli_4f8j2m6q0t4w8a2d6g0k4n8r2v',
  client_secret: 'secret_q3z7c1f5h9k3n7r1u5x9b3e7h1l5p9s3v7y1c5f9j3m7q1t5w9',
};

export const tenantWithCredentialsExample = { ...tenantExample, credentials: credentialPairExample };

export const credentialSummaryExample = {
  client_id: credentialPairExample.client_id,
  createdAt: CREATED,
  revokedAt: null,
};

export const projectCreateExample = {
  projectId: 12,
  projectName: 'Kiosk refresh 2026',
  upstreamRecordId: 'a0B5g00000XyZ12',
};

export const projectExample = { ...projectCreateExample, status: 'Active' };

export const itemCreateExample = { itemId: 7, itemName: 'Card reader' };

export const itemExample = { ...itemCreateExample, upstreamRecordId: null };

export const siteAssetCreateExample = {
  siteCode: 'STORE-0042',
  uniqueId: siteVisitAssetExample.uniqueId,
  friendlyLocation: siteVisitAssetExample.friendlyLocation,
  assetStatus: siteVisitAssetExample.assetStatus,
  assetDisplay: siteVisitAssetExample.assetDisplay,
};

export const siteAssetExample = { siteAssetId: siteVisitAssetExample.siteAssetId, ...siteAssetCreateExample };

export const operatorSiteVisitExample = {
  ...siteVisitExample,
  attributes: {
    ...siteVisitExample.attributes,
    fieldRepName: 'Jordan Lee',
    scheduledDate: '2026-11-07',
    etaTime: '10:30',
    dispatchedAt: null,
    completedAt: null,
    qualityReviewPassed: null,
    deliverablesTransmittedAt: null,
    deliverablesNotes: null,
  },
};

/** The client's message, its attachment's url the operator's download. */
export const operatorMessageExample = {
  ...messageExample,
  attributes: {
    ...messageExample.attributes,
    fileAttachment: {
      ...messageExample.attributes.fileAttachment,
      url: messageExample.attributes.fileAttachment.url.replace('/api/v1/', '/admin/v1/'),
    },
  },
};

/** The same message in the operator's inbox: who wrote about which visit, and how the text begins. */
export const inboxMessageExample = {
  messageId: messageExample.id,
  version: messageExample.meta.version,
  tenantId: CLIENT_ID,
  tenantName: tenantExample.name,
  siteVisitId: messageExample.attributes.siteVisitId,
  clientTicketNumber: siteVisitExample.attributes.clientTicketNumber,
  sender: messageExample.attributes.recordOwner,
  type: messageExample.attributes.type,
  urgency: messageExample.attributes.urgency,
  createdAt: messageExample.attributes.createdAt,
  preview: messageExample.attributes.messageThread,
  previewTruncated: false,
  hasFileAttachment: true,
  handledAt: null,
};

export const legacySubscriptionCreateExample = {
  targetUrl: 'https://hooks.example.com/legacy',
  eventTypes: ['ticket.created'],
};

export const subscriptionWithHealthExample = {
  ...subscriptionExample,
  health: {
    consecutiveFailures: 0,
    failingSince: null,
    lastSuccessAt: '2026-11-06T10:41:12.795Z',
    lastFailureAt: null,
    lastError: null,
    deactivatedReason: null,
    last24Hours: { succeeded: 14, failed: 0, pending: 1, successRate: 1 },
  },
};

export const deliveryExample = {
  deliveryId: 'dlv_7m1q5t9w3z7c1f5h9k3n7r1u5x',
  eventId: 'evt_8k2mq4x7b1c9d3f5g6h0j2n4p6',
  eventType: 'job.scheduled',
  subscriptionId: subscriptionExample.id,
  targetKind: 'subscription',
  tenantId: CLIENT_ID,
  status: 'succeeded',
  attempts: 2,
  attemptLog: [
    { attempt: 1, at: '2026-11-06T10:41:07.600Z', statusCode: 503, error: 'HTTP 503', durationMs: 212 },
    { attempt: 2, at: '2026-11-06T10:41:12.700Z', statusCode: 200, error: null, durationMs: 95 },
  ],
  nextAttemptAt: null,
  lastError: null,
  createdAt: '2026-11-06T10:41:07.550Z',
  updatedAt: '2026-11-06T10:41:12.795Z',
  completedAt: '2026-11-06T10:41:12.795Z',
};
