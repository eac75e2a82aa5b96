/**
 * One tenant with one of everything the client API writes (a site with assets, a visit, a message, a
 * webhook subscription), valid bodies for each client write operation, and the tenant's state as the API
 * shows it: the starting point of the hostile-input suites (fuzz, values).
 */
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { createMessage, type MessageTenant, messageTenant } from '../../helpers/messages.js';
import { siteBody } from '../../helpers/tenants.js';
import { visitBody } from '../../helpers/visits.js';
import { localResolver, testWebhookConfig } from '../../helpers/webhooks.js';
import type { ClientOperation } from './operations.js';

export interface ClientFixture extends MessageTenant {
  messageId: string;
  subscriptionId: string;
}

/** An app whose webhook policy accepts the fixture's subscription, and the fixture: a suite's beforeAll. */
export async function startClientFixture(): Promise<{ t: TestApp; m: ClientFixture }> {
  const t = await startTestApp({ config: { webhook: testWebhookConfig(8443) }, resolver: localResolver });
  return { t, m: await clientFixture(t) };
}

/** Needs the app's webhook policy to accept https://localhost:8443 (testWebhookConfig(8443), localResolver). */
async function clientFixture(t: TestApp): Promise<ClientFixture> {
  const tenant = await messageTenant(t, { assets: 2 });
  const messageId = (await createMessage(t, tenant)).id;
  const subscription = await t.http.post('/api/v1/webhook-subscriptions', {
    token: tenant.fullToken,
    json: { targetUrl: 'https://localhost:8443/hook', eventTypes: ['ticket.created'], secret: 'a secret of sixteen+' },
  });
  return { ...tenant, messageId, subscriptionId: subscription.body.data.id };
}

/** A valid body of the operation, or undefined for an operation without a JSON body. */
export function validBody(operation: ClientOperation, m: ClientFixture): Record<string, unknown> | undefined {
  switch (operation.operationId) {
    case 'createToken':
      return { grant_type: 'client_credentials', client_id: m.clientId, client_secret: m.clientSecret };
    case 'createSite':
      return siteBody();
    case 'updateSite':
      return { city: 'Fuzzville' };
    case 'createSiteVisit':
      return visitBody(m);
    case 'updateSiteVisit':
      return { description: 'Fuzzed' };
    case 'createMessage':
      return { siteVisitId: m.visitId, messageThread: 'Fuzzed' };
    case 'updateMessage':
      return { messageThread: 'Fuzzed' };
    case 'createWebhookSubscription':
      return {
        targetUrl: 'https://localhost:8443/hook',
        eventTypes: ['ticket.created'],
        secret: 'a secret of sixteen+',
      };
    case 'updateWebhookSubscription':
      return { description: 'Fuzzed' };
    default:
      return undefined;
  }
}

/** The fixture's id for a path with an id. */
export function ownId(path: string, m: ClientFixture): string {
  if (path.startsWith('/api/v1/sites/')) return m.siteId;
  if (path.startsWith('/api/v1/site-visits/')) return m.visitId;
  if (path.startsWith('/api/v1/messages/')) return m.messageId;
  return m.subscriptionId;
}

/** The tenant's state as the API shows it: every list and every resource, versions included. */
export async function tenantState(t: TestApp, m: ClientFixture): Promise<string> {
  const paths = [
    '/api/v1/sites?page[size]=100',
    '/api/v1/site-visits?page[size]=100',
    '/api/v1/messages?page[size]=100',
    '/api/v1/webhook-subscriptions',
    `/api/v1/sites/${m.siteId}`,
    `/api/v1/site-visits/${m.visitId}`,
    `/api/v1/messages/${m.messageId}`,
  ];
  const texts = await Promise.all(paths.map(async (path) => (await t.http.get(path, { token: m.fullToken })).text));
  return texts.join('\n');
}
