/**
 * The named schemas of the two documents (src/http/components.ts): every resource, request body, list
 * envelope and shared shape under one name, so that generated clients get one type for each. Routes use
 * these same schema objects; the document refers to the name wherever a route holds an equal schema.
 */
import type { ComponentDefinition, ComponentDefinitions } from '../../http/components.js';
import { CappedListMeta, ListMeta, ResourceMeta } from '../../http/envelope.js';
import { OpenApiDocumentSchema } from '../../http/openapi.js';
import { TokenRequestBody, TokenResponseBody } from '../auth/routes.js';
import { EVENT_ENVELOPE_SCHEMAS } from '../outbox/event-schemas.js';
import { EVENT_TYPES } from '../outbox/types.js';
import { eventSchemaName } from '../outbox/webhooks-openapi.js';
import { FileObject, FileVersion } from '../files/schemas.js';
import { HandledBody, HandledResult, InboxMessage, UnhandledCount } from '../messages/inbox-schemas.js';
import { Listener, ListenerCreateBody, ListenerDocument } from '../webhook-listeners/schemas.js';
import {
  FileAttachmentUpload,
  MessageCreateBody,
  MessageDocument,
  MessageList,
  MessagePatchBody,
  MessageResource,
  OperatorMessageResource,
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
  ReturnLabelUpload,
  SiteVisitAsset,
  SiteVisitCreateBody,
  SiteVisitDocument,
  SiteVisitList,
  SiteVisitPatchBody,
  SiteVisitResource,
} from '../site-visits/schemas.js';
import {
  OperatorSiteVisitDocument,
  OperatorSiteVisitResource,
  SimulatedEvent,
  SimulateResponse,
} from '../site-visits/workflow-schemas.js';
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

type Document = 'client' | 'operator';

/**
 * A named schema of both documents, or of the one `in` names. A name the two documents give different
 * schemas (Project, Item: a resource object for the client, plain for the operator) has an entry for each.
 */
interface NamedSchema extends ComponentDefinition {
  in?: Document;
}

/** Every named schema, in the order each document lists its own. */
const NAMED: [name: string, definition: NamedSchema][] = [
  ['ResourceMeta', { schema: ResourceMeta }],
  ['FileVersion', { schema: FileVersion, example: examples.fileVersionExample }],
  ['FileObject', { schema: FileObject, example: examples.returnLabelExample }],
  ['SiteVisitAsset', { schema: SiteVisitAsset, example: examples.siteVisitAssetExample }],
  ['SiteVisitCreate', { schema: SiteVisitCreateBody, example: examples.siteVisitCreateExample }],
  ['ListMeta', { schema: ListMeta, in: 'client' }],
  ['CappedListMeta', { schema: CappedListMeta, in: 'client' }],
  ['ReferenceMeta', { schema: ReferenceMeta, in: 'client' }],
  ['OpenApiDocument', { schema: OpenApiDocumentSchema, in: 'client' }],
  ['TokenRequest', { schema: TokenRequestBody, in: 'client' }],
  ['AccessToken', { schema: TokenResponseBody, example: examples.tokenExample, in: 'client' }],
  ['Site', { schema: SiteResource, example: examples.siteExample, in: 'client' }],
  ['SiteCreate', { schema: SiteCreateBody, example: examples.siteCreateExample, in: 'client' }],
  ['SitePatch', { schema: SitePatchBody, example: examples.sitePatchExample, in: 'client' }],
  ['SiteDocument', { schema: SiteDocument, in: 'client' }],
  ['SiteList', { schema: SiteList, in: 'client' }],
  ['SiteVisit', { schema: SiteVisitResource, example: examples.siteVisitExample, in: 'client' }],
  ['SiteVisitPatch', { schema: SiteVisitPatchBody, example: examples.siteVisitPatchExample, in: 'client' }],
  ['SiteVisitDocument', { schema: SiteVisitDocument, in: 'client' }],
  ['SiteVisitList', { schema: SiteVisitList, in: 'client' }],
  ['ReturnLabelUpload', { schema: ReturnLabelUpload, in: 'client' }],
  ['SimulatedEvent', { schema: SimulatedEvent, in: 'client' }],
  ['SimulationResult', { schema: SimulateResponse, in: 'client' }],
  ['Tenant', { schema: Tenant, example: operator.tenantExample, in: 'operator' }],
  [
    'TenantWithCredentials',
    { schema: TenantWithCredentials, example: operator.tenantWithCredentialsExample, in: 'operator' },
  ],
  ['TenantCreate', { schema: TenantCreateBody, example: operator.tenantCreateExample, in: 'operator' }],
  ['TenantPatch', { schema: TenantPatchBody, example: { webhookAccess: false }, in: 'operator' }],
  ['CredentialPair', { schema: CredentialPair, example: operator.credentialPairExample, in: 'operator' }],
  ['CredentialSummary', { schema: CredentialSummary, example: operator.credentialSummaryExample, in: 'operator' }],
  ['Project', { schema: ProjectResource, example: examples.projectExample, in: 'client' }],
  ['Project', { schema: Project, example: operator.projectExample, in: 'operator' }],
  ['ProjectList', { schema: ProjectList, in: 'client' }],
  ['ProjectCreate', { schema: ProjectCreateBody, example: operator.projectCreateExample, in: 'operator' }],
  ['ProjectPatch', { schema: ProjectPatchBody, example: { status: 'Inactive' }, in: 'operator' }],
  ['Item', { schema: ItemResource, example: examples.itemExample, in: 'client' }],
  ['Item', { schema: Item, example: operator.itemExample, in: 'operator' }],
  ['ItemList', { schema: ItemList, in: 'client' }],
  ['ItemCreate', { schema: ItemCreateBody, example: operator.itemCreateExample, in: 'operator' }],
  ['SiteAsset', { schema: SiteAsset, example: operator.siteAssetExample, in: 'operator' }],
  ['SiteAssetCreate', { schema: SiteAssetCreateBody, example: operator.siteAssetCreateExample, in: 'operator' }],
  [
    'OperatorSiteVisit',
    { schema: OperatorSiteVisitResource, example: operator.operatorSiteVisitExample, in: 'operator' },
  ],
  ['OperatorSiteVisitDocument', { schema: OperatorSiteVisitDocument, in: 'operator' }],
  ['Message', { schema: MessageResource, example: examples.messageExample, in: 'client' }],
  ['MessageCreate', { schema: MessageCreateBody, example: examples.messageCreateExample, in: 'client' }],
  ['MessagePatch', { schema: MessagePatchBody, example: examples.messagePatchExample, in: 'client' }],
  ['MessageDocument', { schema: MessageDocument, in: 'client' }],
  ['MessageList', { schema: MessageList, in: 'client' }],
  ['FileAttachmentUpload', { schema: FileAttachmentUpload, in: 'client' }],
  ['OperatorMessage', { schema: OperatorMessageResource, example: operator.operatorMessageExample, in: 'operator' }],
  ['InboxMessage', { schema: InboxMessage, example: operator.inboxMessageExample, in: 'operator' }],
  [
    'InboxMessagesHandled',
    {
      schema: HandledBody,
      example: {
        messages: [
          { messageId: operator.inboxMessageExample.messageId, version: operator.inboxMessageExample.version },
        ],
      },
      in: 'operator',
    },
  ],
  [
    'InboxMessagesHandledResult',
    { schema: HandledResult, example: { handled: true, changed: 1, stale: [] }, in: 'operator' },
  ],
  ['UnhandledInboxMessages', { schema: UnhandledCount, example: { unhandled: 3, more: false }, in: 'operator' }],
  ['WebhookSubscription', { schema: Subscription, example: examples.subscriptionExample }],
  [
    'WebhookSubscriptionCreate',
    { schema: SubscriptionCreateBody, example: examples.subscriptionCreateExample, in: 'client' },
  ],
  [
    'WebhookSubscriptionPatch',
    { schema: SubscriptionPatchBody, example: examples.subscriptionPatchExample, in: 'client' },
  ],
  ['WebhookSubscriptionDocument', { schema: SubscriptionDocument, in: 'client' }],
  ['WebhookSubscriptionList', { schema: SubscriptionList, in: 'client' }],
  [
    'WebhookSubscriptionWithHealth',
    { schema: SubscriptionWithHealth, example: operator.subscriptionWithHealthExample, in: 'operator' },
  ],
  [
    'LegacyWebhookSubscriptionCreate',
    { schema: AdminSubscriptionCreateBody, example: operator.legacySubscriptionCreateExample, in: 'operator' },
  ],
  ['WebhookDelivery', { schema: Delivery, example: operator.deliveryExample, in: 'operator' }],
  ['WebhookDeliveryAttempt', { schema: DeliveryAttemptSchema, in: 'operator' }],
  [
    'DeliveryRetryFilter',
    { schema: BulkRetryBody, example: { eventType: 'job.scheduled', dryRun: true }, in: 'operator' },
  ],
  ['DeliveryRetryResult', { schema: BulkRetryResult, example: { dryRun: true, matched: 3 }, in: 'operator' }],
];

function componentsOf(document: Document): ComponentDefinitions {
  return Object.fromEntries(
    NAMED.filter(([, named]) => (named.in ?? document) === document).map(([name, { schema, example }]) => [
      name,
      { schema, example },
    ]),
  );
}

function eventComponents(): ComponentDefinitions {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      eventSchemaName(type),
      { schema: EVENT_ENVELOPE_SCHEMAS[type], example: examples.eventExample(type) },
    ]),
  );
}

export const CLIENT_COMPONENTS: ComponentDefinitions = { ...componentsOf('client'), ...eventComponents() };

export const OPERATOR_COMPONENTS: ComponentDefinitions = componentsOf('operator');

/** Named schemas of the sandbox's own routes, added to the client document in the sandbox only. */
export const SANDBOX_COMPONENTS: ComponentDefinitions = {
  WebhookListener: { schema: Listener },
  WebhookListenerCreate: { schema: ListenerCreateBody },
  WebhookListenerDocument: { schema: ListenerDocument },
};
