// Plain Node.js ESM, in a project that installed the packed tarball: a client lists the sandbox's sites, then
// a subscription delivers a real signed event to an HTTPS receiver here, which verifies it with verifyWebhook.
// Environment: BASE_URL, CREDENTIALS (the sandbox packet), RECEIVER_PORT, RECEIVER_KEY, RECEIVER_CERT.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { createClient, verifyWebhook, WebhookVerificationError } from '@site-services/client';

const env = process.env;
const packet = JSON.parse(readFileSync(env.CREDENTIALS, 'utf8'));
const client = createClient({ baseUrl: env.BASE_URL, clientId: packet.client_id, clientSecret: packet.client_secret });

const codes = [];
for await (const site of client.sites.list()) codes.push(site.attributes.siteCode);
if (!codes.includes(packet.siteCode)) throw new Error(`the sandbox site ${packet.siteCode} is not listed: ${codes}`);
console.log(`listed ${codes.length} site(s), ${packet.siteCode} among them`);

const secret = 'client-package-ci-secret-0123456789';
const ticket = `CI-${Date.now()}`;
let settle;
const verified = new Promise((resolve, reject) => {
  settle = { resolve, reject };
  setTimeout(() => reject(new Error('no verified ticket.created delivery within 45 s')), 45_000).unref();
});
const receiver = https.createServer(
  { key: readFileSync(env.RECEIVER_KEY), cert: readFileSync(env.RECEIVER_CERT) },
  (request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const event = verifyWebhook({ headers: request.headers, rawBody: Buffer.concat(chunks), secret });
        response.writeHead(204).end();
        if (event.type === 'ticket.created' && event.data.clientTicketNumber === ticket) settle.resolve(event);
      } catch (error) {
        response.writeHead(400).end();
        settle.reject(error instanceof WebhookVerificationError ? new Error(`refused: ${error.reason}`) : error);
      }
    });
  },
);
await new Promise((resolve) => receiver.listen(Number(env.RECEIVER_PORT), '127.0.0.1', resolve));

const subscription = await client.webhookSubscriptions.create({
  targetUrl: `https://127.0.0.1:${env.RECEIVER_PORT}/hooks`,
  eventTypes: ['ticket.created'],
  secret,
});
const day = 86_400_000;
const visit = await client.siteVisits.create({
  clientSiteId: packet.siteCode,
  clientTicketNumber: ticket,
  description: 'Installed-package check',
  serviceType: 'Break / Fix',
  jobInstructions: 'None',
  projectId: packet.projectId,
  itemName: packet.itemName,
  startDate: new Date(Date.now() + day).toISOString(),
  dueDate: new Date(Date.now() + 3 * day).toISOString(),
  arePartsRequired: false,
  schedulingRule: 'Date Range',
});
try {
  const event = await verified;
  console.log(`verified ${event.type} ${event.id} for ${visit.id} (subscription ${subscription.id})`);
} finally {
  receiver.close();
  receiver.closeAllConnections();
}
