// A consumer written against the installed package only, with no Node.js types: compiled with `strict`,
// the default lib (DOM included) and skipLibCheck off, so the package's declarations are checked too.
import {
  ApiError,
  type ClientOptions,
  createClient,
  type Site,
  type SiteCreate,
  type SiteServicesClient,
  type SiteVisitCreate,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventOf,
  WebhookVerificationError,
} from '@site-services/client';
import { verifyWebhook as verifyFromSubpath } from '@site-services/client/webhooks';

export async function everySite(options: ClientOptions): Promise<Site[]> {
  const client: SiteServicesClient = createClient(options);
  const body: SiteCreate = {
    name: 'Store 1',
    siteCode: 'S-1',
    addressLine1: '1 Main St',
    city: 'Springfield',
    stateRegion: 'IL',
    postalCode: '62701',
    country: 'US',
  };
  try {
    await client.sites.create(body, { idempotencyKey: 'consumer-S-1' });
  } catch (error) {
    if (!(error instanceof ApiError && error.slug === 'duplicate-resource')) throw error;
  }
  const sites: Site[] = [];
  for await (const site of client.sites.list({ 'page[size]': 50 })) sites.push(site);
  return sites;
}

export async function visitWithLabel(client: SiteServicesClient, body: SiteVisitCreate, pdf: Uint8Array, blob: Blob) {
  const visit = await client.siteVisits.create(body);
  await client.siteVisits.uploadReturnLabel(visit.id, pdf, { fileName: 'label.pdf' });
  await client.siteVisits.uploadReturnLabel(visit.id, blob);
  return visit.attributes.status;
}

/** A fetch-style receiver (workers, Deno, Bun, Node's own Request). */
export async function receive(request: Request, secret: string): Promise<Response> {
  const rawBody = new Uint8Array(await request.arrayBuffer());
  let event: WebhookEvent;
  try {
    event = verifyWebhook({ headers: request.headers, rawBody, secret });
  } catch (error) {
    if (error instanceof WebhookVerificationError) return new Response(error.reason, { status: 400 });
    throw error;
  }
  if (event.type === 'ticket.created') {
    const created: WebhookEventOf<'ticket.created'> = event;
    console.log(created.data.clientTicketNumber);
  }
  return new Response(null, { status: 204 });
}

export const sameVerifier: typeof verifyWebhook = verifyFromSubpath;
