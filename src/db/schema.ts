/**
 * Row types of every table, as Kysely sees them. Column names are snake_case in SQL and here;
 * repositories map rows to the camelCase shapes of the API.
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** A timestamp column with a database default: read as Date, optional on insert. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A timestamp column that every insert sets. */
type RequiredTimestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp column that may be null. */
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A column the database fills on insert (identity or default) and that is never updated. */
type Serial = ColumnType<number, never, never>;

export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: Timestamp;
}

export interface TenantsTable {
  id: string;
  name: string;
  scopes: string[];
  api_enabled: boolean;
  webhook_access: boolean;
  /** The cap on active webhook subscriptions (database default 16). */
  max_active_subscriptions: ColumnType<number, number | undefined, number>;
  /** The most its file versions may hold in all, in MiB (database default 10240). */
  storage_limit_mib: ColumnType<number, number | undefined, number>;
  /** What its file versions hold, in bytes: added with each version (tenants/repository.ts addStorageUse). */
  storage_used_bytes: ColumnType<number, never, number>;
  seq: Serial;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ClientCredentialsTable {
  client_id: string;
  tenant_id: string;
  secret_hash: string;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface ProjectsTable {
  tenant_id: string;
  project_id: string;
  project_id_is_integer: boolean;
  project_name: string;
  status: 'Active' | 'Inactive';
  upstream_record_id: string | null;
  seq: Serial;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ItemsTable {
  tenant_id: string;
  item_id: string;
  item_id_is_integer: boolean;
  item_name: string;
  upstream_record_id: string | null;
  seq: Serial;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SitesTable {
  id: string;
  tenant_id: string;
  seq: Serial;
  site_code: string;
  name: string;
  address_line1: string;
  address_line2: string | null;
  city: string;
  state_region: string;
  postal_code: string;
  country: string;
  unique_id: string | null;
  unique_id2: string | null;
  friendly_location_name: string | null;
  friendly_location_name2: string | null;
  key_required: boolean | null;
  status: string;
  version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SiteAssetsTable {
  id: number;
  tenant_id: string;
  site_id: string;
  unique_id: string;
  friendly_location: string;
  asset_status: string;
  asset_display: string;
  seq: Serial;
  created_at: Timestamp;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  resource_type: string;
  key: string;
  request_hash: string;
  resource_id: string;
  response_status: number;
  response_body: unknown;
  response_etag: string | null;
  completed_at: RequiredTimestamp;
  expires_at: RequiredTimestamp;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  occurred_at: RequiredTimestamp;
  resource_type: string;
  resource_id: string;
  payload_version: string;
  data: unknown;
  seq: Serial;
  created_at: Timestamp;
}

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: string;
  seq: Serial;
  target_url: string;
  description: string | null;
  event_types: string[];
  is_active: boolean;
  signing_version: 'legacy' | 'v1';
  /** The secret sealed with AES-256-GCM (associated data: the subscription id); null for legacy. */
  secret_sealed: string | null;
  created_at: RequiredTimestamp;
  updated_at: RequiredTimestamp;
  consecutive_failures: Generated<number>;
  failing_since: NullableTimestamp;
  last_success_at: NullableTimestamp;
  last_failure_at: NullableTimestamp;
  last_error: string | null;
  deactivated_reason: string | null;
}

/** A sandbox webhook listener's stream state (its delivery target is its webhook_subscriptions row). */
export interface WebhookListenersTable {
  id: string;
  tenant_id: string;
  state: 'open' | 'closed';
  /** The stream that holds the listener now; null while none does (the grace period runs). */
  stream_id: string | null;
  /** The listener closes when this passes: renewed by its stream's heartbeat, then the grace after it drops. */
  alive_until: RequiredTimestamp;
  created_at: RequiredTimestamp;
  closed_at: NullableTimestamp;
}

/** One entry of a delivery's attempt log (DECISIONS: Operator API). */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  event_id: string;
  event_type: string;
  subscription_id: string;
  seq: Serial;
  status: DeliveryStatus;
  /** Claimed attempts, all rounds together. */
  attempts: Generated<number>;
  /** `attempts` when the current round began (0, or the count at an operator retry). */
  round_start: Generated<number>;
  /** When the delivery is due: the next attempt, or the end of the current lease. */
  next_attempt_at: RequiredTimestamp;
  /** Set while a worker holds the delivery; null when it is not claimed. */
  leased_until: NullableTimestamp;
  claimed_at: NullableTimestamp;
  attempt_log: ColumnType<DeliveryAttempt[], never, never>;
  last_error: string | null;
  created_at: RequiredTimestamp;
  updated_at: RequiredTimestamp;
  completed_at: NullableTimestamp;
}

export interface SiteVisitsTable {
  id: string;
  tenant_id: string;
  seq: Serial;
  site_id: string;
  client_ticket_number: string | null;
  description: string;
  service_type: string;
  job_instructions: string;
  /** The project's id as text (projects.project_id). */
  project_id: string;
  /** The item's id as text (items.item_id); clients name items by itemName. */
  item_id: string;
  start_date: RequiredTimestamp;
  due_date: RequiredTimestamp;
  are_parts_required: boolean;
  tracking_number: string | null;
  parts_return_required: boolean | null;
  scheduling_rule: string;
  /** New, Scheduled, Dispatched or Completed (moved by the operator's workflow). */
  status: string;
  version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The field rep's name; null while none is assigned (cleared: awaiting reassignment). */
  field_rep_name: string | null;
  /** YYYY-MM-DD, set by the first schedule action. */
  scheduled_date: string | null;
  /** HH:MM, or null when the schedule has no ETA. */
  eta_time: string | null;
  dispatched_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  /** The last time field-rep deliverables were transmitted. */
  deliverables_transmitted_at: NullableTimestamp;
  /** The notes sent with the last transmission (deliverables_transmitted_at); null when it had none, or before one. */
  deliverables_notes: string | null;
  /** The quality review `complete` took (always true: a failed one is refused); null until the visit is Completed. */
  quality_review_passed: boolean | null;
}

export interface SiteVisitAssetsTable {
  /** siteVisitAssetId: a random integer, like site-asset ids. */
  id: number;
  tenant_id: string;
  visit_id: string;
  site_asset_id: number;
  seq: Serial;
  created_at: Timestamp;
}

export interface FileBlobsTable {
  id: string;
  tenant_id: string;
  created_at: Timestamp;
}

export interface FileChunksTable {
  blob_id: string;
  ordinal: number;
  data: Buffer;
}

export interface FileVersionsTable {
  tenant_id: string;
  /** What the file belongs to, e.g. `site-visit-return-label`. */
  owner_type: string;
  owner_id: string;
  version: number;
  blob_id: string;
  file_name: string;
  content_type: string;
  size_bytes: number;
  uploaded_at: RequiredTimestamp;
}

export interface MessagesTable {
  id: string;
  tenant_id: string;
  seq: Serial;
  site_visit_id: string;
  type: string | null;
  status: string;
  message_thread: string;
  urgency: string | null;
  buyer: boolean | null;
  client_contacts: boolean | null;
  svc_pm: boolean;
  record_owner: string;
  /** Set by the service (Email through the API); internal, not in responses. */
  method: string;
  /** Set by the service to the time of creation; internal, not in responses. */
  occurred_at: RequiredTimestamp;
  version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /**
   * When the operator marked it handled (the shared inbox state, migration 0016); null until then, and again after a
   * client's change to it. Operator-only.
   */
  handled_at: NullableTimestamp;
}

export interface Database {
  server_secrets: ServerSecretsTable;
  tenants: TenantsTable;
  client_credentials: ClientCredentialsTable;
  projects: ProjectsTable;
  items: ItemsTable;
  sites: SitesTable;
  site_assets: SiteAssetsTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_listeners: WebhookListenersTable;
  site_visits: SiteVisitsTable;
  site_visit_assets: SiteVisitAssetsTable;
  file_blobs: FileBlobsTable;
  file_chunks: FileChunksTable;
  file_versions: FileVersionsTable;
  messages: MessagesTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type SiteRow = Selectable<SitesTable>;
export type NewSite = Insertable<SitesTable>;
export type SiteUpdate = Updateable<SitesTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type ItemRow = Selectable<ItemsTable>;
export type SiteAssetRow = Selectable<SiteAssetsTable>;
export type EventRow = Selectable<EventsTable>;
export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookListenerRow = Selectable<WebhookListenersTable>;
export type SiteVisitRow = Selectable<SiteVisitsTable>;
export type NewSiteVisit = Insertable<SiteVisitsTable>;
export type SiteVisitUpdate = Updateable<SiteVisitsTable>;
export type FileVersionRow = Selectable<FileVersionsTable>;
/**
 * A file version as its owner's representation lists it (`returnLabel`, `fileAttachment`), with its owner: the
 * columns a list reads of each of up to 100 versions a row, not the blob's id or the tenant's.
 */
export type ListedFileVersion = Pick<
  FileVersionRow,
  'owner_id' | 'version' | 'file_name' | 'content_type' | 'size_bytes' | 'uploaded_at'
>;
export type MessageRow = Selectable<MessagesTable>;
export type NewMessage = Insertable<MessagesTable>;
export type MessageUpdate = Updateable<MessagesTable>;
