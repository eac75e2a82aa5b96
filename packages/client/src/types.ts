/**
 * Names for the generated types (src/generated/api.ts, from the service's OpenAPI document): request
 * bodies, resource objects and pages, derived by path so nothing is copied by hand.
 */
import type { paths, webhooks } from './generated/api.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type JsonBody<T> = T extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type CollectionPath = '/api/v1/sites' | '/api/v1/site-visits' | '/api/v1/messages';
export type ItemPath<P extends CollectionPath> = `${P}/{id}`;

export type CreateBody<P extends CollectionPath> = JsonBody<paths[P]['post']>;
export type PatchBody<P extends CollectionPath> = JsonBody<paths[ItemPath<P>]['patch']>;
export type ListQuery<P extends CollectionPath> = NonNullable<paths[P]['get']['parameters']['query']>;
export type Page<P extends CollectionPath> = Json<paths[P]['get']['responses'][200]>;
export type ResourceOf<P extends CollectionPath> = Json<paths[ItemPath<P>]['get']['responses'][200]>['data'];

export type SiteCreate = CreateBody<'/api/v1/sites'>;
export type SitePatch = PatchBody<'/api/v1/sites'>;
export type Site = ResourceOf<'/api/v1/sites'>;
export type SiteVisitCreate = CreateBody<'/api/v1/site-visits'>;
export type SiteVisitPatch = PatchBody<'/api/v1/site-visits'>;
export type SiteVisit = ResourceOf<'/api/v1/site-visits'>;
export type MessageCreate = CreateBody<'/api/v1/messages'>;
export type MessagePatch = PatchBody<'/api/v1/messages'>;
export type Message = ResourceOf<'/api/v1/messages'>;

export type Project = Json<paths['/api/v1/projects']['get']['responses'][200]>['data'][number];
export type Item = Json<paths['/api/v1/items']['get']['responses'][200]>['data'][number];

export type WebhookSubscription = Json<paths['/api/v1/webhook-subscriptions']['get']['responses'][200]>['data'][number];
export type WebhookSubscriptionCreate = JsonBody<paths['/api/v1/webhook-subscriptions']['post']>;
export type WebhookSubscriptionPatch = JsonBody<paths['/api/v1/webhook-subscriptions/{id}']['patch']>;

export type ReturnLabelUpload = Json<paths['/api/v1/site-visits/{id}/return-label']['post']['responses'][201]>['data'];
export type FileAttachmentUpload = Json<
  paths['/api/v1/messages/{id}/file-attachment']['post']['responses'][201]
>['data'];

/** The seven webhook event types, from the document's `webhooks` map. */
export type WebhookEventType = keyof webhooks;
/** The body of a delivery: a union discriminated by `type`. */
export type WebhookEvent = { [K in WebhookEventType]: JsonBody<webhooks[K]['post']> }[WebhookEventType];
export type WebhookEventOf<K extends WebhookEventType> = Extract<WebhookEvent, { type: K }>;
