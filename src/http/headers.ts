/** Response header schemas, for the OpenAPI document and the response checks of the tests. */
import { Type } from 'typebox';

const ETag = Type.String({ description: 'The quoted version of the resource, e.g. "3". Send it as If-Match.' });

export const etagHeaders = Type.Object({ etag: ETag });

export const createdHeaders = Type.Object({
  etag: ETag,
  'idempotent-replayed': Type.Optional(
    Type.Literal('true', { description: 'Present on a replay of an earlier request with the same Idempotency-Key.' }),
  ),
});
