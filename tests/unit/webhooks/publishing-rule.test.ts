/**
 * The publishing rule (outbox/service.ts, SPEC: Event types): ticket.created reaches every tenant's
 * subscriptions; the other lifecycle events only a tenant with both webhook access and the API enabled.
 */
import { describe, expect, it } from 'vitest';
import { isPublishedTo, tenantReceivesLifecycleEvents } from '../../../src/modules/outbox/service.js';
import { EVENT_TYPES } from '../../../src/modules/outbox/types.js';
import { TENANT_SETTINGS } from '../../helpers/tenant-settings.js';

describe('the publishing rule', () => {
  it('gives lifecycle events only to a tenant with webhook access and the API enabled', () => {
    expect(TENANT_SETTINGS.map(tenantReceivesLifecycleEvents)).toEqual([true, false, false, false]);
  });

  it('publishes ticket.created whatever the settings', () => {
    for (const tenant of TENANT_SETTINGS) expect(isPublishedTo(tenant, 'ticket.created')).toBe(true);
  });

  it('publishes every other event type by the rule', () => {
    for (const type of EVENT_TYPES.filter((type) => type !== 'ticket.created'))
      for (const tenant of TENANT_SETTINGS)
        expect(isPublishedTo(tenant, type)).toBe(tenantReceivesLifecycleEvents(tenant));
  });
});
