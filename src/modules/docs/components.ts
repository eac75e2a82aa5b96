/**
 * The named schemas of the two documents (src/http/components.ts): every resource, request body, list
 * envelope and shared shape under one name, so that generated clients get one type for each. Routes use
 * these same schema objects; the document refers to the name wherever a route holds an equal schema.
 */
import type { ComponentDefinitions } from '../../http/components.js';
import { CappedListMeta, ListMeta, ResourceMeta } from '../../http/envelope.js';
import { OpenApiDocumentSchema } from '../../http/openapi.js';
import { TokenRequestBody, TokenResponseBody } from '../auth/routes.js';
import { EVENT_ENVELOPE_SCHEMAS } from '../outbox/event-schemas.js';
import { EVENT_TYPES } from '../outbox/types.js';
import { eventSchemaName } from '../outbox/webhooks-openapi.js';
import { FileObject, FileVersion } from '../files/schemas.js';
import { Listener, ListenerCreateBody, ListenerDocument } from '../webhook-listeners/schemas.js';
import {
  FileAttachmentUpload,
  MessageCreateBody,
  MessageDocument,
  MessageList,
  MessagePatchBody,
  MessageResource,
} from '../messages/schemas.js';
import {
  Item,
  ItemCreateBody,
  ItemList,
  ItemResource,
  Project,
  ProjectCreateBody,
  ProjectList,
  ProjectPatchBody,
  ProjectResource,
  ReferenceMeta,
} from '../reference/schemas.js';
import { SiteAsset, SiteAssetCreateBody } from '../site-assets/schemas.js';
import {
  OperatorSiteVisitDocument,
  OperatorSiteVisitResource,
  ReturnLabelUpload,
  SimulatedEvent,
  SimulateResponse,
  SiteVisitAsset,
  SiteVisitCreateBody,
  SiteVisitDocument,
  SiteVisitList,
  SiteVisitPatchBody,
  SiteVisitResource,
} from '../site-visits/schemas.js';
import { SiteCreateBody, SiteDocument, SiteList, SitePatchBody, SiteResource } from '../sites/schemas.js';
import {
  CredentialPair,
  CredentialSummary,
  Tenant,
  TenantCreateBody,
  TenantPatchBody,
  TenantWithCredentials,
} from '../tenants/schemas.js';
import { BulkRetryBody, BulkRetryResult, Delivery, DeliveryAttemptSchema } from '../outbox/delivery-schemas.js';
import {
  AdminSubscriptionCreateBody,
  Subscription,
  SubscriptionCreateBody,
  SubscriptionDocument,
  SubscriptionList,
  SubscriptionPatchBody,
  SubscriptionWithHealth,
} from '../webhook-subscriptions/schemas.js';
import * as examples from './examples.js';
import * as operator from './operator-examples.js';

/** Shapes both documents share. */
const SHARED: ComponentDefinitions = {
  ResourceMeta: { schema: ResourceMeta },
  FileVersion: { schema: FileVersion, example: examples.fileVersionExample },
  FileObject: { schema: FileObject, example: examples.returnLabelExample },
  SiteVisitAsset: { schema: SiteVisitAsset, example: examples.siteVisitAssetExample },
  SiteVisitCreate: { schema: SiteVisitCreateBody, example: examples.siteVisitCreateExample },
};

function eventComponents(): ComponentDefinitions {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      eventSchemaName(type),
      { schema: EVENT_ENVELOPE_SCHEMAS[type], example: examples.eventExample(type) },
    ]),
  );
}

export const CLIENT_COMPONENTS: ComponentDefinitions = {
  ...SHARED,
  ListMeta: { schema: ListMeta },
  CappedListMeta: { schema: CappedListMeta },
  ReferenceMeta: { schema: ReferenceMeta },
  OpenApiDocument: { schema: OpenApiDocumentSchema },
  TokenRequest: { schema: TokenRequestBody },
  AccessToken: { schema: TokenResponseBody, example: examples.tokenExample },
  Site: { schema: SiteResource, example: examples.siteExample },
  SiteCreate: { schema: SiteCreateBody, example: examples.siteCreateExample },
  SitePatch: { schema: SitePatchBody, example: examples.sitePatchExample },
  SiteDocument: { schema: SiteDocument },
  SiteList: { schema: SiteList },
  SiteVisit: { schema: SiteVisitResource, example: examples.siteVisitExample },
  SiteVisitPatch: { schema: SiteVisitPatchBody, example: examples.siteVisitPatchExample },
  SiteVisitDocument: { schema: SiteVisitDocument },
  SiteVisitList: { schema: SiteVisitList },
  ReturnLabelUpload: { schema: ReturnLabelUpload },
  SimulatedEvent: { schema: SimulatedEvent },
  SimulationResult: { schema: SimulateResponse },
  Project: { schema: ProjectResource, example: examples.projectExample },
  ProjectList: { schema: ProjectList },
  Item: { schema: ItemResource, example: examples.itemExample },
  ItemList: { schema: ItemList },
  Message: { schema: MessageResource, example: examples.messageExample },
  MessageCreate: { schema: MessageCreateBody, example: examples.messageCreateExample },
  MessagePatch: { schema: MessagePatchBody, example: examples.messagePatchExample },
  MessageDocument: { schema: MessageDocument },
  MessageList: { schema: MessageList },
  FileAttachmentUpload: { schema: FileAttachmentUpload },
  WebhookSubscription: { schema: Subscription, example: examples.subscriptionExample },
  WebhookSubscriptionCreate: { schema: SubscriptionCreateBody, example: examples.subscriptionCreateExample },
  WebhookSubscriptionPatch: { schema: SubscriptionPatchBody, example: examples.subscriptionPatchExample },
  WebhookSubscriptionDocument: { schema: SubscriptionDocument },
  WebhookSubscriptionList: { schema: SubscriptionList },
  ...eventComponents(),
};

export const OPERATOR_COMPONENTS: ComponentDefinitions = {
  ...SHARED,
  Tenant: { schema: Tenant, example: operator.tenantExample },
  TenantWithCredentials: { schema: TenantWithCredentials, example: operator.tenantWithCredentialsExample },
  TenantCreate: { schema: TenantCreateBody, example: operator.tenantCreateExample },
  TenantPatch: { schema: TenantPatchBody, example: { webhookAccess: false } },
  CredentialPair: { schema: CredentialPair, example: operator.credentialPairExample },
  CredentialSummary: { schema: CredentialSummary, example: operator.credentialSummaryExample },
  Project: { schema: Project, example: operator.projectExample },
  ProjectCreate: { schema: ProjectCreateBody, example: operator.projectCreateExample },
  ProjectPatch: { schema: ProjectPatchBody, example: { status: 'Inactive' } },
  Item: { schema: Item, example: operator.itemExample },
  ItemCreate: { schema: ItemCreateBody, example: operator.itemCreateExample },
  SiteAsset: { schema: SiteAsset, example: operator.siteAssetExample },
  SiteAssetCreate: { schema: SiteAssetCreateBody, example: operator.siteAssetCreateExample },
  OperatorSiteVisit: { schema: OperatorSiteVisitResource, example: operator.operatorSiteVisitExample },
  OperatorSiteVisitDocument: { schema: OperatorSiteVisitDocument },
  WebhookSubscription: { schema: Subscription, example: examples.subscriptionExample },
  WebhookSubscriptionWithHealth: { schema: SubscriptionWithHealth, example: operator.subscriptionWithHealthExample },
  LegacyWebhookSubscriptionCreate: {
    schema: AdminSubscriptionCreateBody,
    example: operator.legacySubscriptionCreateExample,
  },
  WebhookDelivery: { schema: Delivery, example: operator.deliveryExample },
  WebhookDeliveryAttempt: { schema: DeliveryAttemptSchema },
  DeliveryRetryFilter: { schema: BulkRetryBody, example: { eventType: 'job.scheduled', dryRun: true } },
  DeliveryRetryResult: { schema: BulkRetryResult, example: { dryRun: true, matched: 3 } },
};

/** Named schemas of the sandbox's own routes, added to the client document in the sandbox only. */
export const SANDBOX_COMPONENTS: ComponentDefinitions = {
  WebhookListener: { schema: Listener },
  WebhookListenerCreate: { schema: ListenerCreateBody },
  WebhookListenerDocument: { schema: ListenerDocument },
};
