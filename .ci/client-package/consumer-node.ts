// The same package in a Node.js project (@types/node beside the DOM lib): Buffers, paths, node:http headers.
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createClient, verifyWebhook, type WebhookEvent } from '@site-services/client';

const client = createClient({
  baseUrl: process.env.SVC_BASE_URL ?? 'http://127.0.0.1:3000',
  clientId: process.env.SVC_CLIENT_ID ?? '',
  clientSecret: process.env.SVC_CLIENT_SECRET ?? '',
});

export async function uploads(visitId: string, messageId: string): Promise<void> {
  await client.siteVisits.uploadReturnLabel(visitId, './return-label.pdf');
  await client.siteVisits.uploadReturnLabel(visitId, readFileSync('./return-label.pdf'));
  await client.messages.uploadAttachment(messageId, Buffer.from('%PDF-1.4'), { fileName: 'note.pdf' });
}

export function fromNodeRequest(request: IncomingMessage, rawBody: Buffer, secrets: string[]): WebhookEvent {
  return verifyWebhook({ headers: request.headers, rawBody, secret: secrets });
}
