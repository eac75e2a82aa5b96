/** Operator API: tenants and their credential pairs. */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { noStoreHeaders } from '../../http/headers.js';
import { DataOf as data, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import {
  CredentialPair,
  CredentialParams,
  CredentialSummary,
  Tenant,
  TenantCreateBody,
  TenantParams,
  TenantPatchBody,
  TenantWithCredentials,
} from './schemas.js';
import { listTenants } from './repository.js';
import * as tenants from './service.js';

const tags = ['Tenants'];

export function registerTenantAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock, credentialStatus } = ctx;

  app.post(
    '/admin/v1/tenants',
    {
      schema: {
        operationId: 'createTenant',
        summary: 'Create a tenant with its first credential pair',
        description:
          "The client's credential pair (client_id and client_secret) is in the answer and shown only this once: only a hash of the secret is stored. Scopes default to all six, apiEnabled and webhookAccess to true.",
        tags,
        body: TenantCreateBody,
        response: { 201: { ...data(TenantWithCredentials), headers: noStoreHeaders }, ...problemResponses([401, 422]) },
      },
    },
    async (request, reply) =>
      // No cache keeps the new secret: every operator answer is sent with no-store (registerNoStore).
      reply.code(201).send({ data: await tenants.createTenant(db, request.body, clock.now()) }),
  );

  app.get(
    '/admin/v1/tenants',
    {
      schema: {
        operationId: 'listTenants',
        summary: 'List tenants',
        description: 'Every tenant with its scopes and flags, without credentials.',
        tags,
        querystring: NoQuery,
        response: { 200: data(Type.Array(Tenant)), ...problemResponses([401]) },
      },
    },
    async () => ({ data: (await listTenants(db)).map(tenants.toTenant) }),
  );

  app.get(
    '/admin/v1/tenants/:tenantId',
    {
      schema: {
        operationId: 'getTenant',
        summary: 'Get a tenant',
        description: 'The tenant with its scopes and flags, without credentials.',
        tags,
        params: TenantParams,
        querystring: NoQuery,
        response: { 200: data(Tenant), ...problemResponses([401, 404]) },
      },
    },
    async (request) => ({ data: tenants.toTenant(await tenants.getTenant(db, request.params.tenantId)) }),
  );

  app.patch(
    '/admin/v1/tenants/:tenantId',
    {
      schema: {
        operationId: 'updateTenant',
        summary: "Change a tenant's name, scopes, flags, subscription limit or storage limit",
        description:
          'Narrowed scopes stop working for tokens already issued within a few seconds. Lowering maxActiveSubscriptions below what the tenant has removes nothing: its subscriptions stay active and keep receiving deliveries, but it can create or activate none until below the limit. Lowering storageLimitMiB below what its files hold (storageUsedBytes) removes nothing either: it uploads none until below the limit.',
        tags,
        params: TenantParams,
        body: TenantPatchBody,
        response: { 200: data(Tenant), ...problemResponses([401, 404, 422]) },
      },
    },
    async (request) => {
      const tenant = await tenants.patchTenant(db, request.params.tenantId, request.body, clock.now());
      credentialStatus.forgetAll();
      return { data: tenant };
    },
  );

  app.get(
    '/admin/v1/tenants/:tenantId/credentials',
    {
      schema: {
        operationId: 'listCredentials',
        summary: "List a tenant's credential pairs (without secrets)",
        description:
          'Each pair by client_id, with when it was issued and, once revoked, when; secrets are never shown again.',
        tags,
        params: TenantParams,
        querystring: NoQuery,
        response: { 200: data(Type.Array(CredentialSummary)), ...problemResponses([401, 404]) },
      },
    },
    async (request) => ({ data: await tenants.listCredentialPairs(db, request.params.tenantId) }),
  );

  app.post(
    '/admin/v1/tenants/:tenantId/credentials',
    {
      schema: {
        operationId: 'addCredentials',
        summary: 'Issue one more credential pair; earlier pairs keep working',
        description:
          'For rotating credentials: hand the new pair to the client, then revoke the old one. The secret is shown only in this answer.',
        tags,
        params: TenantParams,
        response: { 201: { ...data(CredentialPair), headers: noStoreHeaders }, ...problemResponses([401, 404]) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ data: await tenants.addCredentialPair(db, request.params.tenantId, clock.now()) }),
  );

  app.delete(
    '/admin/v1/tenants/:tenantId/credentials/:client_id',
    {
      schema: {
        operationId: 'revokeCredentials',
        summary: 'Revoke a credential pair',
        description:
          'New tokens are refused at once; tokens already issued stop working within seconds (at the latest when they expire).',
        tags,
        params: CredentialParams,
        response: { 204: Type.Null({ description: 'Revoked.' }), ...problemResponses([401, 404]) },
      },
    },
    async (request, reply) => {
      await tenants.revokeCredentialPair(db, request.params.tenantId, request.params.client_id, clock.now());
      credentialStatus.forget(request.params.client_id);
      return reply.code(204).send(null);
    },
  );
}
