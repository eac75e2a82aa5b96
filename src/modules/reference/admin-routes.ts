/** Operator API: a tenant's projects and items. */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { DataOf, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { TenantParams } from '../tenants/schemas.js';
import { getTenant } from '../tenants/service.js';
import * as repository from './repository.js';
import { Item, ItemCreateBody, Project, ProjectCreateBody, ProjectParams, ProjectPatchBody } from './schemas.js';
import * as reference from './service.js';

const tags = ['Reference data'];

export function registerReferenceAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;

  app.post(
    '/admin/v1/tenants/:tenantId/projects',
    {
      schema: {
        operationId: 'createProject',
        summary: 'Add a project to a tenant',
        description:
          'The project the client then names as projectId of its site visits; Active unless status says otherwise. A projectId the tenant already has is 409.',
        tags,
        params: TenantParams,
        body: ProjectCreateBody,
        response: {
          201: DataOf(Project),
          ...problemResponses([401, 404, 409, 422], {}, {}, { 409: ['duplicate-resource'] }),
        },
      },
    },
    async (request, reply) => {
      await getTenant(db, request.params.tenantId);
      return reply
        .code(201)
        .send({ data: await reference.createProject(db, request.params.tenantId, request.body, clock.now()) });
    },
  );

  app.get(
    '/admin/v1/tenants/:tenantId/projects',
    {
      schema: {
        operationId: 'listTenantProjects',
        summary: "List a tenant's projects, active or not",
        description: 'Every project of the tenant, Inactive ones included (the client API lists only Active ones).',
        tags,
        params: TenantParams,
        querystring: NoQuery,
        response: { 200: DataOf(Type.Array(Project)), ...problemResponses([401, 404]) },
      },
    },
    async (request) => {
      await getTenant(db, request.params.tenantId);
      const rows = await repository.listProjects(db, request.params.tenantId, { activeOnly: false, limit: 10_000 });
      return { data: rows.map(reference.toProject) };
    },
  );

  app.patch(
    '/admin/v1/tenants/:tenantId/projects/:projectId',
    {
      schema: {
        operationId: 'updateProject',
        summary: 'Rename a project or change its status',
        description:
          'Only supplied members change. A site visit that names an Inactive project is refused with 409 invalid-project.',
        tags,
        params: ProjectParams,
        body: ProjectPatchBody,
        response: { 200: DataOf(Project), ...problemResponses([401, 404, 422]) },
      },
    },
    async (request) => ({
      data: await reference.patchProject(
        db,
        request.params.tenantId,
        request.params.projectId,
        request.body,
        clock.now(),
      ),
    }),
  );

  app.post(
    '/admin/v1/tenants/:tenantId/items',
    {
      schema: {
        operationId: 'createItem',
        summary: 'Add an item to a tenant',
        description:
          'The item the client then names as itemName of its site visits. An itemName or itemId the tenant already has is 409.',
        tags,
        params: TenantParams,
        body: ItemCreateBody,
        response: {
          201: DataOf(Item),
          ...problemResponses([401, 404, 409, 422], {}, {}, { 409: ['duplicate-resource'] }),
        },
      },
    },
    async (request, reply) => {
      await getTenant(db, request.params.tenantId);
      return reply
        .code(201)
        .send({ data: await reference.createItem(db, request.params.tenantId, request.body, clock.now()) });
    },
  );

  app.get(
    '/admin/v1/tenants/:tenantId/items',
    {
      schema: {
        operationId: 'listTenantItems',
        summary: "List a tenant's items",
        description: 'Every item of the tenant.',
        tags,
        params: TenantParams,
        querystring: NoQuery,
        response: { 200: DataOf(Type.Array(Item)), ...problemResponses([401, 404]) },
      },
    },
    async (request) => {
      await getTenant(db, request.params.tenantId);
      return { data: (await repository.listItems(db, request.params.tenantId, 10_000)).map(reference.toItem) };
    },
  );
}
