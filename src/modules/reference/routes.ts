/**
 * The client's reference lists (SPEC: Reference items; Reference lists endpoint rules): the Active
 * projects and the items a site visit may name. Capped lookups: only page[size] applies.
 */
import type { AppContext } from '../../app-context.js';
import { DEFAULT_PAGE_SIZE } from '../../http/pagination.js';
import { problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import * as repository from './repository.js';
import { ItemList, ProjectList, ReferenceListQuery } from './schemas.js';
import { ITEM_TYPE, PROJECT_TYPE, toItem, toProject } from './service.js';

const tags = ['Reference lists'];

/** The reference meta: upstreamRecordId only when known. */
function referenceMeta(upstreamRecordId: string | null) {
  return upstreamRecordId === null ? {} : { upstreamRecordId };
}

export function registerReferenceRoutes(app: Api, ctx: AppContext): void {
  const { db } = ctx;

  app.get(
    '/api/v1/projects',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'listProjects',
        summary: 'List your Active projects',
        description: 'A capped lookup, oldest first: only page[size] applies and meta.nextCursor never appears.',
        tags,
        querystring: ReferenceListQuery,
        response: { 200: ProjectList, ...problemResponses([401, 403, 422, 429]) },
      },
    },
    async (request) => {
      const pageSize = request.query['page[size]'] ?? DEFAULT_PAGE_SIZE;
      const rows = await repository.listProjects(db, request.auth.tenantId, { activeOnly: true, limit: pageSize });
      return {
        data: rows.map((row) => {
          const { projectId, projectName } = toProject(row);
          return {
            id: row.project_id,
            type: PROJECT_TYPE,
            attributes: { projectId, projectName, status: 'Active' as const },
            meta: referenceMeta(row.upstream_record_id),
          };
        }),
        meta: { pageSize },
      };
    },
  );

  app.get(
    '/api/v1/items',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'listItems',
        summary: 'List your items',
        description: 'A capped lookup, oldest first: only page[size] applies and meta.nextCursor never appears.',
        tags,
        querystring: ReferenceListQuery,
        response: { 200: ItemList, ...problemResponses([401, 403, 422, 429]) },
      },
    },
    async (request) => {
      const pageSize = request.query['page[size]'] ?? DEFAULT_PAGE_SIZE;
      const rows = await repository.listItems(db, request.auth.tenantId, pageSize);
      return {
        data: rows.map((row) => {
          const { itemId, itemName } = toItem(row);
          return {
            id: row.item_id,
            type: ITEM_TYPE,
            attributes: { itemId, itemName },
            meta: referenceMeta(row.upstream_record_id),
          };
        }),
        meta: { pageSize },
      };
    },
  );
}
