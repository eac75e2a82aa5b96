/**
 * B2, the framework limit: a bare Fastify server on the same machine, no auth, no database, no schema,
 * answering the same JSON documents the service answers (captured from it by the bench) with the same
 * status codes. Uploads are read to the end and answered with a small document.
 */
import Fastify from 'fastify';
import { serveRequests } from './lib/processes.js';

let documents: Record<string, unknown> = {};

const app = Fastify({ logger: false, bodyLimit: 11 * 1024 * 1024 });
app.addContentTypeParser('multipart/form-data', (_request, payload, done) => {
  payload.on('data', () => undefined);
  payload.on('end', () => done(null, null));
  payload.on('error', (error) => done(error as Error, undefined));
});
app.get('/bare/site', async () => documents.site);
app.get('/bare/sites', async () => documents.list);
app.post('/bare/sites', async (_request, reply) => reply.code(201).send(documents.created));
app.post('/bare/site-visits', async (_request, reply) => reply.code(201).send(documents.visit));
app.post('/bare/upload', async (_request, reply) => reply.code(201).send(documents.upload));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error('no port');

serveRequests(async (message) => {
  if (message.type === 'port') return address.port;
  if (message.type === 'documents') {
    documents = message.documents as Record<string, unknown>;
    return null;
  }
  throw new Error(`unknown request ${message.type}`);
});
