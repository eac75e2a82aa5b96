/**
 * The contract check. Every response a test receives from the client API (/api/v1/…) is checked against
 * the app's own OpenAPI document, and every one from the operator API (/admin/v1/…) against the operator's:
 * the status is documented for the operation, the content type is documented for that status, the body is
 * valid against its schema (Ajv, JSON Schema 2020-12 with formats: the document is OpenAPI 3.1), and every
 * required response header (inline or a reference to components.headers) is present and valid, and a
 * problem's type is one the response's description lists ("Problem types: …", problemResponses).
 * A response for a path or method the document does not have must be an error and a problem.
 * A mismatch throws from the response hook, so the test that received the response fails.
 *
 * startTestApp installs it on `t.http`: every test gets it without asking.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonObject, OpenApiDocument } from '../../src/http/openapi.js';
import type { ResponseHook, TestResponse } from './http.js';

const DOCUMENT_ID = 'https://contract.test/openapi.json';

interface DocumentedOperation {
  method: string;
  template: string;
  pattern: RegExp;
  parameterCount: number;
  operation: JsonObject;
}

export class ContractViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

function pointer(...segments: string[]): string {
  return segments.map((segment) => `/${encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'))}`).join('');
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 12)
    .map((error) => {
      const where = error.instancePath || '(root)';
      const params = error.params as Record<string, unknown>;
      const detail = params.additionalProperty
        ? ` (${String(params.additionalProperty)})`
        : params.allowedValues
          ? ` (${JSON.stringify(params.allowedValues)})`
          : '';
      return `    ${where} ${error.message ?? error.keyword}${detail}`;
    })
    .join('\n');
}

function excerpt(text: string): string {
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** Whether a documented media type (possibly a range such as image/*) covers the response's. */
function mediaTypeMatches(documented: string, actual: string): boolean {
  if (documented === actual || documented === '*/*') return true;
  return documented.endsWith('/*') && actual.startsWith(documented.slice(0, -1));
}

export class ContractChecker {
  private readonly ajv: Ajv2020;
  /** Header values arrive as strings: a second instance coerces them to the declared type. */
  private readonly headerAjv: Ajv2020;
  private readonly operations: DocumentedOperation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly document: OpenApiDocument,
    private readonly prefix = '/api/v1/',
  ) {
    this.ajv = this.createAjv(false);
    this.headerAjv = this.createAjv(true);
    for (const [template, item] of Object.entries(document.paths)) {
      const source = template
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('');
      for (const [method, operation] of Object.entries(item)) {
        this.operations.push({
          method,
          template,
          pattern: new RegExp(`^${source}/?$`),
          parameterCount: (template.match(/\{/g) ?? []).length,
          operation,
        });
      }
    }
    // A literal path segment wins over a parameter (…/sites/lookup before …/sites/{id}).
    this.operations.sort((a, b) => a.parameterCount - b.parameterCount);
  }

  /** The hook to give HttpClient. */
  readonly hook: ResponseHook = (request, response) => this.check(request.method, request.path, response);

  check(method: string, requestPath: string, response: TestResponse): void {
    const path = requestPath.split('?')[0]!;
    if (!path.startsWith(this.prefix)) return;
    const upper = method.toUpperCase();
    const head = upper === 'HEAD';
    const where = `${upper} ${requestPath} → ${response.status}`;
    const found = this.operations.find(
      (candidate) => candidate.method === (head ? 'get' : upper.toLowerCase()) && candidate.pattern.test(path),
    );

    if (!found) {
      if (response.status < 400)
        throw new ContractViolation(
          `Contract violation: ${where}: the OpenAPI document has no operation ${upper} ${path}.`,
        );
      // An unknown path (404), a wrong method (405) or a refusal before routing (429): a problem.
      this.checkBody(
        where,
        'undocumented path',
        `${DOCUMENT_ID}#${pointer('components', 'schemas', 'Problem')}`,
        response,
        ['application/problem+json'],
        head,
      );
      return;
    }

    const { operation } = found;
    const name = `${operation.operationId ?? `${found.method} ${found.template}`}`;
    const status = String(response.status);
    const responses = operation.responses as Record<string, JsonObject>;
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => candidate in responses);
    if (key === undefined) {
      throw new ContractViolation(
        `Contract violation: ${where} (${name}): status ${status} is not documented for this operation (documented: ${Object.keys(responses).join(', ')}).\n  body: ${excerpt(response.text)}`,
      );
    }
    const documented = responses[key]!;

    for (const [header, declared] of Object.entries((documented.headers ?? {}) as Record<string, JsonObject>)) {
      // A header declared once under components.headers is referenced: its definition is there.
      const reference = typeof declared.$ref === 'string' ? declared.$ref : undefined;
      const definition = reference ? this.resolve(reference) : declared;
      const value = response.headers.get(header);
      if (value === null) {
        if (definition.required)
          throw new ContractViolation(
            `Contract violation: ${where} (${name}): the required response header ${header} is missing.`,
          );
        continue;
      }
      const validate = this.validator(
        this.headerAjv,
        reference
          ? `${DOCUMENT_ID}${reference}/schema`
          : `${DOCUMENT_ID}#${pointer('paths', found.template, found.method, 'responses', key, 'headers', header, 'schema')}`,
        true,
      );
      if (!validate({ value })) {
        throw new ContractViolation(
          `Contract violation: ${where} (${name}): response header ${header}: ${JSON.stringify(value)} does not match the document:\n${describeErrors(validate.errors)}`,
        );
      }
    }

    const content = (documented.content ?? {}) as Record<string, JsonObject>;
    const mediaTypes = Object.keys(content);
    if (mediaTypes.length === 0) {
      if (response.text.length > 0)
        throw new ContractViolation(
          `Contract violation: ${where} (${name}): documented without a body, but the response has one:\n  ${excerpt(response.text)}`,
        );
      return;
    }
    const actual = response.contentType.split(';')[0]!.trim().toLowerCase();
    const mediaType = mediaTypes.find((candidate) => mediaTypeMatches(candidate.toLowerCase(), actual));
    if (mediaType === undefined) {
      throw new ContractViolation(
        `Contract violation: ${where} (${name}): content type ${JSON.stringify(actual)} is not documented (documented: ${mediaTypes.join(', ')}).`,
      );
    }
    const schema = content[mediaType]!.schema as JsonObject | undefined;
    // Binary bodies (downloads) are checked by content type only.
    if (!schema || schema.format === 'binary' || !/[/+]json$/.test(mediaType)) return;
    this.checkBody(
      where,
      name,
      `${DOCUMENT_ID}#${pointer('paths', found.template, found.method, 'responses', key, 'content', mediaType, 'schema')}`,
      response,
      [mediaType],
      head,
    );
    if (actual === 'application/problem+json' && !head) this.checkProblemType(where, name, documented, response);
  }

  /** A problem's type is one the response's description lists for this operation and status ("Problem types: …"). */
  private checkProblemType(where: string, name: string, documented: JsonObject, response: TestResponse): void {
    const listed = /Problem types: ([a-z0-9, -]+)\./.exec(String(documented.description ?? ''))?.[1]?.split(', ');
    const type = String((response.body as { type?: unknown }).type ?? '');
    const slug = type.slice(type.lastIndexOf('/') + 1);
    if (listed && !listed.includes(slug)) {
      throw new ContractViolation(
        `Contract violation: ${where} (${name}): problem type ${slug} is not among those documented for this status (${listed.join(', ')}).`,
      );
    }
  }

  private checkBody(
    where: string,
    name: string,
    ref: string,
    response: TestResponse,
    mediaTypes: string[],
    head: boolean,
  ): void {
    const actual = response.contentType.split(';')[0]!.trim().toLowerCase();
    if (!mediaTypes.includes(actual)) {
      throw new ContractViolation(
        `Contract violation: ${where} (${name}): content type ${JSON.stringify(actual)}, expected ${mediaTypes.join(' or ')}.\n  body: ${excerpt(response.text)}`,
      );
    }
    if (head) return;
    const validate = this.validator(this.ajv, ref, false);
    if (!validate(response.body)) {
      throw new ContractViolation(
        `Contract violation: ${where} (${name}): the body does not match the document:\n${describeErrors(validate.errors)}\n  body: ${excerpt(response.text)}`,
      );
    }
    const problemStatus =
      actual === 'application/problem+json' ? (response.body as { status?: unknown }).status : response.status;
    if (problemStatus !== response.status) {
      throw new ContractViolation(
        `Contract violation: ${where} (${name}): the problem's status ${JSON.stringify(problemStatus)} differs from the HTTP status.`,
      );
    }
  }

  /** The object a local reference (`#/components/…`) points to. */
  private resolve(reference: string): JsonObject {
    let target: unknown = this.document;
    for (const segment of reference.replace(/^#\//, '').split('/')) {
      const key = decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
      target = (target as JsonObject | undefined)?.[key];
    }
    if (typeof target !== 'object' || target === null)
      throw new ContractViolation(`Unresolvable reference ${reference}.`);
    return target as JsonObject;
  }

  private validator(ajv: Ajv2020, ref: string, header: boolean): ValidateFunction {
    const cacheKey = `${header ? 'header' : 'body'} ${ref}`;
    let validate = this.validators.get(cacheKey);
    if (!validate) {
      const schema = header ? { type: 'object', properties: { value: { $ref: ref } } } : { $ref: ref };
      validate = ajv.compile(schema);
      this.validators.set(cacheKey, validate);
    }
    return validate;
  }

  private createAjv(coerceTypes: boolean): Ajv2020 {
    const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes, validateSchema: false });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    // OpenAPI's file format: any string (binary bodies are not validated).
    ajv.addFormat('binary', true);
    ajv.addSchema(this.document, DOCUMENT_ID);
    return ajv;
  }
}
