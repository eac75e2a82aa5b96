/**
 * SPEC's common envelope: `{data: {id, type, attributes, meta: {version, etag}}}` for one resource,
 * `{data: [...], meta: {pageSize, nextCursor?}}` for a list. Schemas and runtime helpers live together
 * so that the shape validated, documented and produced is one thing.
 */
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { isoTimeOf } from '../lib/iso-time.js';

export const ResourceMeta = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'Grows by exactly 1 with every change of the resource.' }),
    etag: Type.String({ description: 'The quoted version, e.g. "3"; send it as If-Match.', examples: ['"1"'] }),
  },
  { additionalProperties: false },
);

export function ResourceSchema<A extends TSchema, M extends TSchema = typeof ResourceMeta>(
  type: string,
  attributes: A,
  options: { idPrefix?: string; meta?: M; title?: string } = {},
) {
  return Type.Object(
    {
      id: Type.String({
        description: options.idPrefix ? `Opaque identifier with the ${options.idPrefix} prefix.` : 'Identifier.',
      }),
      type: Type.Literal(type),
      attributes,
      meta: options.meta ?? (ResourceMeta as unknown as M),
    },
    { additionalProperties: false, ...(options.title ? { title: options.title } : {}) },
  );
}

export function SingleSchema<R extends TSchema>(resource: R) {
  return Type.Object({ data: resource }, { additionalProperties: false });
}

export const ListMeta = Type.Object(
  {
    pageSize: Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'The page size applied: the requested page[size] or the default 25.',
    }),
    nextCursor: Type.Optional(
      Type.String({
        description: 'Present only when more records exist; pass it as page[after] to get the next page.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A capped reference list: same shape, but `nextCursor` never appears. */
export const CappedListMeta = Type.Object({ pageSize: ListMeta.properties.pageSize }, { additionalProperties: false });

export function ListSchema<R extends TSchema>(resource: R, meta: TObject<TProperties> = ListMeta) {
  return Type.Object({ data: Type.Array(resource), meta }, { additionalProperties: false });
}

export type ListMetaValue = Static<typeof ListMeta>;

export function etagOf(version: number): string {
  return `"${version}"`;
}

export interface ResourceObject<A> {
  id: string;
  type: string;
  attributes: A;
  meta: { version: number; etag: string };
}

export function resourceObject<A>(type: string, id: string, attributes: A, version: number): ResourceObject<A> {
  return { id, type, attributes, meta: { version, etag: etagOf(version) } };
}

/** Sends one resource with its ETag header (201 on create, 200 on GET and PATCH). */
export function sendResource<A>(reply: FastifyReply, status: number, resource: ResourceObject<A>) {
  return reply.code(status).header('etag', resource.meta.etag).send({ data: resource });
}

/** A resource's JSON by the compiled serialiser of its schema (Fastify's, compiled once per schema and route). */
export function serializeResource<A>(reply: FastifyReply, schema: TSchema, resource: ResourceObject<A>): string {
  return reply.serializeInput(resource as unknown as Record<string, unknown>, schema as Record<string, unknown>);
}

/** ISO 8601 with milliseconds and Z, the one timestamp format of every response. */
export function isoTime(value: Date): string {
  return isoTimeOf(value);
}

export function isoTimeOrNull(value: Date | null): string | null {
  return value ? isoTime(value) : null;
}
