/**
 * The fields of each resource's create body, so that a CSV header naming something else (`site_code` for
 * `siteCode`, `Name`) is refused before any row is sent: otherwise every row would be a 422, one request each
 * at the import's pace. Typed from the generated create bodies: a field added to or removed from a schema
 * fails the build here until this list follows.
 */
import type { components } from '../../generated/api.js';

type Schemas = components['schemas'];
/** Every field of T, and nothing else. */
type Every<T> = { [K in keyof T]-?: true };

const site: Every<Schemas['SiteCreate']> = {
  name: true,
  siteCode: true,
  addressLine1: true,
  addressLine2: true,
  city: true,
  stateRegion: true,
  postalCode: true,
  country: true,
  uniqueID: true,
  uniqueID2: true,
  friendlyLocationName: true,
  friendlyLocationName2: true,
  keyRequired: true,
};

const siteVisit: Every<Schemas['SiteVisitCreate']> = {
  clientSiteId: true,
  description: true,
  clientTicketNumber: true,
  serviceType: true,
  jobInstructions: true,
  projectId: true,
  itemName: true,
  startDate: true,
  dueDate: true,
  arePartsRequired: true,
  trackingNumber: true,
  partsReturnRequired: true,
  siteAssetIds: true,
  schedulingRule: true,
};

// A message row may name its visit by clientTicketNumber instead of siteVisitId (run.ts resolves it).
const message: Every<Schemas['MessageCreate']> & { clientTicketNumber: true } = {
  siteVisitId: true,
  clientTicketNumber: true,
  type: true,
  messageThread: true,
  status: true,
  urgency: true,
  buyer: true,
  clientContacts: true,
};

export const CREATE_FIELDS = {
  sites: Object.keys(site),
  'site-visits': Object.keys(siteVisit),
  messages: Object.keys(message),
} as const satisfies Record<string, readonly string[]>;
