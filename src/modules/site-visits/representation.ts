/**
 * A visit as served: its record plus the assigned assets (only for tokens that may read them) and the
 * return-label versions, loaded in bulk for a whole page.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, ListedFileVersion } from '../../db/schema.js';
import { isoTime, resourceObject, type ResourceObject } from '../../http/envelope.js';
import { toFileObject } from '../files/schemas.js';
import { fileVersionsByOwner } from '../files/service.js';
import { type AssignedAssetRow, listAssignedAssets, type NewVisitRecord } from './repository.js';
import type { SiteVisitAssetValue, SiteVisitAttributesValue } from './schemas.js';
import type { OperatorSiteVisitAttributesValue } from './workflow-schemas.js';

export const SITE_VISIT_TYPE = 'site-visits';
export const RETURN_LABEL_OWNER = 'site-visit-return-label';

export interface VisitView {
  record: NewVisitRecord;
  /** Undefined when the caller may not read assets (no site-visits:read). */
  assets: AssignedAssetRow[] | undefined;
  returnLabel: ListedFileVersion[];
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row));
    if (list) list.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

export async function loadVisitViews(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  records: readonly NewVisitRecord[],
  includeAssets: boolean,
): Promise<VisitView[]> {
  const ids = records.map((record) => record.id);
  const [assets, labelsByVisit] = await Promise.all([
    includeAssets ? listAssignedAssets(db, tenantId, ids) : Promise.resolve(undefined),
    fileVersionsByOwner(db, tenantId, RETURN_LABEL_OWNER, ids),
  ]);
  const assetsByVisit = assets && groupBy(assets, (row) => row.visit_id);
  return records.map((record) => ({
    record,
    assets: assetsByVisit ? (assetsByVisit.get(record.id) ?? []) : undefined,
    returnLabel: labelsByVisit.get(record.id) ?? [],
  }));
}

/**
 * The view of a visit created in this transaction, without the reads that cannot find anything: no return
 * label can exist yet (its file versions name the visit, whose id is new), and a visit created without
 * siteAssetIds has no assets.
 */
export async function loadNewVisitView(
  tx: Transaction<Database>,
  tenantId: string,
  record: NewVisitRecord,
  includeAssets: boolean,
  assigned: boolean,
): Promise<VisitView> {
  if (!(includeAssets && assigned)) return newVisitView(record, includeAssets);
  return { record, assets: await listAssignedAssets(tx, tenantId, [record.id]), returnLabel: [] };
}

/** The view of a new visit without site assets: known without reading anything. */
export function newVisitView(record: NewVisitRecord, includeAssets: boolean): VisitView {
  return { record, assets: includeAssets ? [] : undefined, returnLabel: [] };
}

export function returnLabelUrl(baseUrl: string, visitId: string): string {
  return `${baseUrl}/api/v1/site-visits/${encodeURIComponent(visitId)}/return-label`;
}

/** The operator API's download of the same label: the operator token does not open the client API's. */
export function operatorReturnLabelUrl(baseUrl: string, visitId: string): string {
  return `${baseUrl}/admin/v1/site-visits/${encodeURIComponent(visitId)}/return-label`;
}

/** "Kiosk A (front entrance) [DEMO-ASSET-1]; Kiosk B (checkout) [DEMO-ASSET-2]"; "" when none. */
export function assetsSummary(assets: readonly AssignedAssetRow[]): string {
  return assets.map((asset) => `${asset.asset_display} [${asset.unique_id}]`).join('; ');
}

function toSiteVisitAsset(row: AssignedAssetRow): SiteVisitAssetValue {
  return {
    siteVisitAssetId: row.id,
    siteAssetId: row.site_asset_id,
    uniqueId: row.unique_id,
    friendlyLocation: row.friendly_location,
    assetStatus: row.asset_status,
    assetDisplay: row.asset_display,
  };
}

/** `baseUrl` is PUBLIC_BASE_URL, for the absolute return-label address. */
export function toVisitResource(view: VisitView, baseUrl: string): ResourceObject<SiteVisitAttributesValue> {
  const { record } = view;
  const attributes: SiteVisitAttributesValue = {
    clientId: record.tenant_id,
    status: record.status,
    createdAt: isoTime(record.created_at),
    updatedAt: isoTime(record.updated_at),
    clientSiteId: record.site_code,
    description: record.description,
    clientTicketNumber: record.client_ticket_number,
    serviceType: record.service_type,
    jobInstructions: record.job_instructions,
    projectId: record.project_id_is_integer ? Number(record.project_id) : record.project_id,
    itemName: record.item_name,
    startDate: isoTime(record.start_date),
    dueDate: isoTime(record.due_date),
    arePartsRequired: record.are_parts_required,
    trackingNumber: record.tracking_number,
    partsReturnRequired: record.parts_return_required,
    schedulingRule: record.scheduling_rule,
    ...(view.assets
      ? { assetsToService: assetsSummary(view.assets), siteVisitAssets: view.assets.map(toSiteVisitAsset) }
      : {}),
    returnLabel: toFileObject(returnLabelUrl(baseUrl, record.id), view.returnLabel),
  };
  return resourceObject(SITE_VISIT_TYPE, record.id, attributes, record.version);
}

/**
 * The operator's view: the client's representation (assets included) plus the workflow's fields, which
 * the client API does not show (clients learn of the workflow through status and the events).
 */
export function toOperatorVisitResource(
  view: VisitView,
  baseUrl: string,
): ResourceObject<OperatorSiteVisitAttributesValue> {
  const resource = toVisitResource(view, baseUrl);
  const { record } = view;
  return {
    ...resource,
    attributes: {
      ...resource.attributes,
      returnLabel: toFileObject(operatorReturnLabelUrl(baseUrl, record.id), view.returnLabel),
      fieldRepName: record.field_rep_name,
      scheduledDate: record.scheduled_date,
      etaTime: record.eta_time,
      dispatchedAt: record.dispatched_at && isoTime(record.dispatched_at),
      completedAt: record.completed_at && isoTime(record.completed_at),
      // Completed by the release before migration 0015 (or by it during a rolling upgrade): nothing recorded, and a
      // Completed visit passed its review, which `complete` refuses to record as failed.
      qualityReviewPassed: record.quality_review_passed ?? (record.status === 'Completed' ? true : null),
      deliverablesTransmittedAt: record.deliverables_transmitted_at && isoTime(record.deliverables_transmitted_at),
      deliverablesNotes: record.deliverables_notes,
    },
  };
}
