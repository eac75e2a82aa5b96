import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_events.js';
import * as m0003 from './0003_site_visits.js';
import * as m0004 from './0004_messages.js';
import * as m0005 from './0005_webhooks.js';
import * as m0006 from './0006_visit_workflow.js';
import * as m0007 from './0007_webhook_fairness.js';
import * as m0008 from './0008_webhook_listeners.js';
import * as m0009 from './0009_visit_ticket_constraint.js';
import * as m0010 from './0010_tenant_keys.js';
import * as m0011 from './0011_tenant_storage.js';
import * as m0012 from './0012_active_subscriptions.js';
import * as m0013 from './0013_messages_of_a_visit.js';
import * as m0014 from './0014_client_messages_in_arrival_order.js';
import * as m0015 from './0015_visit_outcome.js';
import * as m0016 from './0016_handled_messages.js';
import * as m0017 from './0017_tenant_unhandled_messages.js';

/**
 * Every migration, in order. Listed explicitly (no directory scanning) so that the compiled
 * build, the tests and `npm run migrate` apply exactly the same set.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_events': m0002,
  '0003_site_visits': m0003,
  '0004_messages': m0004,
  '0005_webhooks': m0005,
  '0006_visit_workflow': m0006,
  '0007_webhook_fairness': m0007,
  '0008_webhook_listeners': m0008,
  '0009_visit_ticket_constraint': m0009,
  '0010_tenant_keys': m0010,
  '0011_tenant_storage': m0011,
  '0012_active_subscriptions': m0012,
  '0013_messages_of_a_visit': m0013,
  '0014_client_messages_in_arrival_order': m0014,
  '0015_visit_outcome': m0015,
  '0016_handled_messages': m0016,
  '0017_tenant_unhandled_messages': m0017,
};
