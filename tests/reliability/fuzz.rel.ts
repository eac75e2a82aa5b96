/**
 * Property-based fuzzing (fast-check) of every client operation of the OpenAPI document: valid bodies
 * mutated (members dropped, replaced by arbitrary JSON, unknown members added, the whole body replaced or
 * not JSON at all), arbitrary query strings, path ids and headers (Content-Type, If-Match,
 * Idempotency-Key, Accept). Properties: never a 5xx; every response matches the document (the tests'
 * contract check: a 4xx is a documented problem detail); and a rejected request changes nothing (the
 * tenant's lists and resources, versions included, are identical before and after it).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { type ClientFixture, ownId, startClientFixture, tenantState, validBody } from './lib/client-fixture.js';
import { reportFigure, scaled } from './lib/figures.js';
import { type ClientOperation, clientOperations, fillPath } from './lib/operations.js';

const RUNS_PER_OPERATION = scaled(12, 150);

let t: TestApp;
let m: ClientFixture;
beforeAll(async () => ({ t, m } = await startClientFixture()));
afterAll(async () => t?.close());

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/).map((value) => value.trim());
/** Strings as clients send them, and now and then any code point at all (U+0000 included: no text column holds it). */
const text = (constraints: fc.StringConstraints = {}) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string(constraints) },
    { weight: 1, arbitrary: fc.string({ ...constraints, unit: 'binary' }) },
  );
const json = () =>
  fc.oneof({ weight: 3, arbitrary: fc.jsonValue() }, { weight: 1, arbitrary: fc.jsonValue({ stringUnit: 'binary' }) });
const mutation = (valid: Record<string, unknown>) => {
  const keys = Object.keys(valid);
  return fc.oneof(
    fc.constant(valid),
    keys.length > 0
      ? fc
          .constantFrom(...keys)
          .map((key) => Object.fromEntries(Object.entries(valid).filter(([name]) => name !== key)))
      : fc.constant(valid),
    keys.length > 0
      ? fc.tuple(fc.constantFrom(...keys), json()).map(([key, value]) => ({ ...valid, [key]: value }))
      : fc.constant(valid),
    fc.tuple(text({ maxLength: 20 }), json()).map(([key, value]) => ({ ...valid, [key]: value })),
    json(),
  );
};

interface FuzzRequest {
  id: string;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body:
    | { kind: 'json'; value: unknown }
    | { kind: 'raw'; text: string }
    | { kind: 'none' }
    | { kind: 'upload'; valid: boolean; bytes: Uint8Array };
}

function requests(operation: ClientOperation): fc.Arbitrary<FuzzRequest> {
  const valid = validBody(operation, m);
  const upload = operation.operation.requestBody?.content?.['multipart/form-data'] !== undefined;
  const body: fc.Arbitrary<FuzzRequest['body']> = upload
    ? fc.oneof(
        fc.record({
          kind: fc.constant('upload' as const),
          valid: fc.boolean(),
          bytes: fc.uint8Array({ maxLength: 2048 }),
        }),
        fc.constant({ kind: 'none' as const }),
      )
    : valid
      ? fc.oneof(
          { weight: 4, arbitrary: mutation(valid).map((value) => ({ kind: 'json' as const, value })) },
          { weight: 1, arbitrary: text({ maxLength: 200 }).map((raw) => ({ kind: 'raw' as const, text: raw })) },
          { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
        )
      : fc.oneof(
          fc.constant({ kind: 'none' as const }),
          json().map((value) => ({ kind: 'json' as const, value })),
        );
  const declared = (operation.operation.parameters ?? [])
    .filter((parameter: { in: string }) => parameter.in === 'query')
    .map((parameter: { name: string }) => parameter.name as string);
  const queryKey =
    declared.length > 0 ? fc.oneof(fc.constantFrom(...declared), text({ maxLength: 12 })) : text({ maxLength: 12 });
  return fc.record({
    id: fc.oneof(
      { weight: 3, arbitrary: fc.constant(operation.path.includes('{') ? ownId(operation.path, m) : '') },
      // Not `.` or `..`: a URL's dot segments (`%2E` too) are resolved away by the client before sending.
      { weight: 1, arbitrary: text({ minLength: 1, maxLength: 80 }).filter((id) => !/^\.{1,2}$/.test(id)) },
    ),
    query: fc.array(
      fc.tuple(
        queryKey,
        fc.oneof(
          text({ maxLength: 30 }),
          fc.integer().map(String),
          fc.constantFrom('', '0', '-1', '1e9', 'null', '[]'),
        ),
      ),
      { maxLength: 4 },
    ),
    headers: fc.record(
      {
        'content-type': fc.oneof(
          fc.constantFrom(
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            MULTIPART_CONTENT_TYPE,
            'multipart/form-data',
          ),
          headerValue,
        ),
        'if-match': fc.oneof(fc.constantFrom('"1"', '"2"', '*', 'W/"1"', '"999"'), headerValue),
        'idempotency-key': headerValue,
        accept: fc.oneof(fc.constantFrom('application/json', 'text/html', 'application/xml', '*/*'), headerValue),
      },
      { requiredKeys: [] },
    ),
    body,
  });
}

it(`fuzzes every client operation (${RUNS_PER_OPERATION} runs each): no 5xx, documented problems, rejected requests change nothing`, {
  timeout: 200_000,
}, async () => {
  const operations = clientOperations(t.app);
  let total = 0;
  let rejected = 0;
  let accepted = 0;
  let serverErrors = 0;
  for (const operation of operations) {
    await fc.assert(
      fc.asyncProperty(requests(operation), async (request) => {
        const before = await tenantState(t, m);
        const path = fillPath(operation.path, () => request.id);
        const headers: Record<string, string> = { ...request.headers };
        let body: string | Uint8Array | undefined;
        if (request.body.kind === 'json') body = JSON.stringify(request.body.value);
        else if (request.body.kind === 'raw') body = request.body.text;
        else if (request.body.kind === 'upload') {
          body = request.body.valid ? fileForm(pdfBytes()) : request.body.bytes;
          headers['content-type'] = MULTIPART_CONTENT_TYPE;
        }
        // fetch sends no body with GET (a body there would be ignored by the server anyway).
        if (operation.method === 'GET') body = undefined;
        if (body === undefined) delete headers['content-type'];
        const search = new URLSearchParams(request.query).toString();
        const response = await t.http.request(operation.method, `${path}${search ? `?${search}` : ''}`, {
          token: m.fullToken,
          headers,
          ...(body !== undefined ? { body: body as never } : {}),
        });
        total++;
        if (response.status >= 500) serverErrors++;
        expect(
          response.status,
          `${operation.method} ${path}?${search} ${JSON.stringify(request)} → ${response.text}`,
        ).toBeLessThan(500);
        if (response.status >= 400) {
          rejected++;
          expect(typeof response.body?.type, response.text).toBe('string');
          expect(response.body.status).toBe(response.status);
          if (operation.method !== 'GET')
            expect(
              await tenantState(t, m),
              `${operation.operationId} rejected with ${response.status} but changed state`,
            ).toBe(before);
        } else accepted++;
      }),
      { numRuns: RUNS_PER_OPERATION },
    );
  }
  reportFigure(
    'fuzz',
    `${total} generated requests over ${operations.length} operations (${RUNS_PER_OPERATION} each): ${serverErrors} 5xx, ${rejected} rejected as documented problems with 0 state changes, ${accepted} accepted`,
  );
});
