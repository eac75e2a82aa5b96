/**
 * Names for the generated types (src/generated/api.ts, from the service's OpenAPI document): the
 * document's named schemas, and per collection path its bodies, resource and page, so nothing is copied
 * by hand.
 */
import type { components, paths, webhooks } from './generated/api.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type JsonBody<T> = T extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type CollectionPath = '/api/v1/sites' | '/api/v1/site-visits' | '/api/v1/messages';
export type ItemPath<P extends CollectionPath> = `${P}/{id}`;

export type CreateBody<P extends CollectionPath> = JsonBody<paths[P]['post']>;
export type PatchBody<P extends CollectionPath> = JsonBody<paths[ItemPath<P>]['patch']>;
export type ListQuery<P extends CollectionPath> = NonNullable<paths[P]['get']['parameters']['query']>;
export type Page<P extends CollectionPath> = Json<paths[P]['get']['responses'][200]>;
export type ResourceOf<P extends CollectionPath> = Json<paths[ItemPath<P>]['get']['responses'][200]>['data'];

/** A schema named in the document's components (one type per resource, body, list and event). */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

export type SiteCreate = Schema<'SiteCreate'>;
export type SitePatch = Schema<'SitePatch'>;
export type Site = Schema<'Site'>;
export type SiteVisitCreate = Schema<'SiteVisitCreate'>;
export type SiteVisitPatch = Schema<'SiteVisitPatch'>;
export type SiteVisit = Schema<'SiteVisit'>;
export type MessageCreate = Schema<'MessageCreate'>;
export type MessagePatch = Schema<'MessagePatch'>;
export type Message = Schema<'Message'>;
export type FileObject = Schema<'FileObject'>;
export type FileVersion = Schema<'FileVersion'>;
export type Problem = Schema<'Problem'>;
export type ValidationProblem = Schema<'ValidationProblem'>;

export type Project = Schema<'Project'>;
export type Item = Schema<'Item'>;

export type WebhookSubscription = Schema<'WebhookSubscription'>;
export type WebhookSubscriptionCreate = Schema<'WebhookSubscriptionCreate'>;
export type WebhookSubscriptionPatch = Schema<'WebhookSubscriptionPatch'>;

export type ReturnLabelUpload = Schema<'ReturnLabelUpload'>['data'];
export type FileAttachmentUpload = Schema<'FileAttachmentUpload'>['data'];

/** The seven webhook event types, from the document's `webhooks` map. */
export type WebhookEventType = keyof webhooks;
/** The body of a delivery: a union discriminated by `type`. */
export type WebhookEvent = { [K in WebhookEventType]: JsonBody<webhooks[K]['post']> }[WebhookEventType];
export type WebhookEventOf<K extends WebhookEventType> = Extract<WebhookEvent, { type: K }>;
