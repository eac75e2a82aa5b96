/** Every combination of the two tenant settings the publishing rule reads (outbox/service.ts). */
export const TENANT_SETTINGS = [
  { webhookAccess: true, apiEnabled: true },
  { webhookAccess: true, apiEnabled: false },
  { webhookAccess: false, apiEnabled: true },
  { webhookAccess: false, apiEnabled: false },
];
