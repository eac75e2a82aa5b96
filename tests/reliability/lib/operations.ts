/** The API's operations as its OpenAPI documents list them (every route, nothing kept by hand). */
import type { FastifyInstance } from 'fastify';
import { clientOpenApiDocument } from '../../../src/http/openapi.js';

export interface ClientOperation {
  method: string;
  /** The OpenAPI path, e.g. /api/v1/sites/{id}. */
  path: string;
  operationId: string;
  /** Needs a bearer token (every operation but the token endpoint). */
  secured: boolean;
  /** Its OpenAPI operation object (parameters, requestBody, responses). */
  operation: any;
}

export function clientOperations(app: FastifyInstance): ClientOperation[] {
  return documentOperations(clientOpenApiDocument(app));
}

/** The operations of an OpenAPI document (client or operator). */
export function documentOperations(openApi: unknown): ClientOperation[] {
  const document = openApi as { paths: Record<string, Record<string, any>> };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'patch', 'put', 'delete'].includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId as string,
        secured: ((operation.security ?? []) as object[]).some((requirement) => Object.keys(requirement).length > 0),
        operation,
      })),
  );
}

/** The path with each `{name}` replaced by `value(name)` (percent-encoded). */
export function fillPath(path: string, value: (name: string) => string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(value(name)));
}
