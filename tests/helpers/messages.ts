/** Arrange steps for message tests: a tenant with a visit, valid message bodies, uploads of attachments. */
import { sql } from 'kysely';
import { newId } from '../../src/lib/ids.js';
import { CLIENT_API_RECORD_OWNER, DEFAULT_MESSAGE_STATUS } from '../../src/modules/messages/schemas.js';
import { MESSAGE_METHOD } from '../../src/modules/messages/service.js';
import type { TestApp } from './app.js';
import type { Operator } from './tenants.js';
import { fileForm, MULTIPART_CONTENT_TYPE } from './multipart.js';
import { createVisit, visitTenant, type VisitTenant } from './visits.js';

export interface MessageTenant extends VisitTenant {
  /** A visit of the tenant to put messages on. */
  visitId: string;
}

/** SPEC's four urgency values, with their en dash (U+2013). */
export const URGENCY = {
  Low: 'Low \u2013 No immediate action required',
  Normal: 'Normal \u2013 Standard priority / routine handling',
  High: 'High \u2013 Needs attention soon',
  Critical: 'Critical \u2013 Immediate action required',
} as const;

export const MESSAGE_TYPES = [
  'Scope Update',
  'Change Appointment',
  'Cancellation',
  'Job On-Hold',
  'Tracking Update',
  'Floor Plan',
  'Other',
  'Reminder',
  'Due Date Change Request',
  'Missed Appointment',
  'Incomplete Scope',
  'Site Prep Issue',
  'MFG/Hardware Issues',
  'Shipping Damage',
  'Pricing Estimate',
  'Warranty Request',
  'Exception',
  'Parts Missing',
  'Schedule Please',
  'Billing Dispute',
  'Request Travel Pay',
  'General',
  'Schedule',
  'Pay',
  'Support',
  'Request',
];

export async function messageTenant(
  t: Operator,
  options: Parameters<typeof visitTenant>[1] = {},
): Promise<MessageTenant> {
  const v = await visitTenant(t, { assets: 0, ...options });
  const visit = await createVisit(t, v);
  return { ...v, visitId: visit.id };
}

/** A valid create body on the tenant's visit. */
export function messageBody(m: Pick<MessageTenant, 'visitId'>, overrides: Record<string, unknown> = {}) {
  return {
    siteVisitId: m.visitId,
    messageThread: 'Technician could not access the site; please confirm the key holder.',
    ...overrides,
  };
}

export async function createMessage(t: Operator, m: MessageTenant, overrides: Record<string, unknown> = {}) {
  const response = await t.http.post('/api/v1/messages', { token: m.fullToken, json: messageBody(m, overrides) });
  if (response.status !== 201) throw new Error(`message create failed: ${response.status} ${response.text}`);
  return response.body.data as { id: string; attributes: Record<string, any>; meta: { version: number; etag: string } };
}

export function attachmentPath(messageId: string): string {
  return `/api/v1/messages/${messageId}/file-attachment`;
}

/** Uploads `data` as the message's attachment (the form's field `file`). */
export function uploadAttachment(
  t: TestApp,
  token: string,
  messageId: string,
  data: Buffer,
  filename = 'attachment.pdf',
  declared = 'application/pdf',
) {
  return t.http.post(attachmentPath(messageId), {
    token,
    body: fileForm(data, filename, declared),
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
}

/**
 * `count` copies of the message, with ids `prefix` + 1…count, after every message there is (a plan's test of a
 * table of many messages, made in one statement).
 */
export async function copyMessage(t: TestApp, messageId: string, prefix: string, count: number): Promise<void> {
  await sql`insert into messages (id, tenant_id, site_visit_id, type, status, message_thread, urgency, buyer,
      client_contacts, svc_pm, record_owner, method, occurred_at)
    select ${prefix} || n, tenant_id, site_visit_id, type, status, message_thread, urgency, buyer,
      client_contacts, svc_pm, record_owner, method, occurred_at
    from messages, generate_series(1, ${count}) n where id = ${messageId}`.execute(t.database.db);
}

/** A message's place in arrival order and its time, taken as a create takes them: before its insert commits. */
export interface ArrivalSlot {
  seq: string;
  createdAt: Date;
}

/**
 * Takes the next place in arrival order now, for a message committed later by `commitInSlot`: creates made
 * meanwhile sort after it, as when a slow create's transaction commits after a later one (the identity's value is
 * taken at insert, the row seen at commit). A place of the identity itself, so no other message takes it.
 */
export async function takeArrivalSlot(t: TestApp): Promise<ArrivalSlot> {
  const { rows } = await sql<{
    seq: string;
  }>`select nextval(pg_get_serial_sequence('messages', 'seq'))::text as seq`.execute(t.database.db);
  return { seq: rows[0]!.seq, createdAt: new Date() };
}

/** Commits, in the slot taken before, a client's message on the tenant's visit, as the client API writes one. */
export async function commitInSlot(t: TestApp, slot: ArrivalSlot, m: MessageTenant, text: string): Promise<string> {
  const id = newId('msg');
  await sql`insert into messages (id, tenant_id, seq, site_visit_id, status, message_thread, svc_pm, record_owner,
      method, occurred_at, created_at, updated_at)
    overriding system value
    values (${id}, ${m.tenantId}, ${slot.seq}::bigint, ${m.visitId}, ${DEFAULT_MESSAGE_STATUS}, ${text}, true,
      ${CLIENT_API_RECORD_OWNER}, ${MESSAGE_METHOD},
      ${slot.createdAt}, ${slot.createdAt}, ${slot.createdAt})`.execute(t.database.db);
  return id;
}
