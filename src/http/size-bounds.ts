/**
 * Size bounds before everything else. Ajv with `allErrors` validates every item of an array and every
 * member of an object even after the array's `maxItems` has failed: a body of 200,000 wrong items cost
 * seconds and 200,000 errors. This check, compiled from the same schema, looks only at how many items a
 * list has (`maxItems`), how many members a map has (`maxProperties`) and how many unknown members a
 * closed object has, walking no container beyond its bound; when a bound is exceeded the body is refused
 * with those errors alone and is never handed to Ajv. The cost of a refusal is then bounded by the schema,
 * not by the body.
 */
import type { ErrorObject } from 'ajv';
import { MAX_FIELD_ERRORS } from './problem.js';
import { escapePointer } from './request-values.js';

/**
 * Keyword of the one extra error a closed object's flood of unknown members ends with: `params.count` is
 * how many unknown members were found beyond those named (validation.ts reports it as a count).
 */
export const OMITTED_KEYWORD = 'x-omitted';

/** The size errors of a value, or null when every bound holds. */
export type SizeCheck = (data: unknown) => ErrorObject[] | null;

type Check = (data: unknown, path: string, errors: ErrorObject[]) => void;

interface SchemaNode {
  type?: string | string[];
  maxItems?: number;
  items?: unknown;
  maxProperties?: number;
  properties?: Record<string, unknown>;
  patternProperties?: Record<string, unknown>;
  additionalProperties?: unknown;
  discriminator?: { propertyName: string };
  oneOf?: unknown[];
  anyOf?: unknown[];
  allOf?: unknown[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const pointer = (path: string, name: string) => `${path}/${escapePointer(name)}`;

function sizeError(keyword: string, instancePath: string, schema: SchemaNode, params: object): ErrorObject {
  return { keyword, instancePath, schemaPath: `#/${keyword}`, params, parentSchema: schema } as ErrorObject;
}

/** Compiles the size check of a schema; a schema with no bound anywhere checks nothing. */
export function compileSizeCheck(schema: object): SizeCheck {
  const check = compileNode(schema);
  if (!check) return () => null;
  return (data) => {
    const errors: ErrorObject[] = [];
    check(data, '', errors);
    return errors.length > 0 ? errors : null;
  };
}

function compileNode(raw: unknown): Check | undefined {
  if (!isRecord(raw)) return undefined;
  const schema = raw as SchemaNode;
  const checks = [compileArray(schema), compileObject(schema), ...compileUnions(schema)].filter(
    (check): check is Check => check !== undefined,
  );
  if (checks.length === 0) return undefined;
  if (checks.length === 1) return checks[0];
  return (data, path, errors) => {
    for (const check of checks) check(data, path, errors);
  };
}

function compileArray(schema: SchemaNode): Check | undefined {
  const max = schema.maxItems;
  const items = compileNode(schema.items);
  if (max === undefined && !items) return undefined;
  return (data, path, errors) => {
    if (!Array.isArray(data)) return;
    if (max !== undefined && data.length > max) {
      errors.push(sizeError('maxItems', path, schema, { limit: max }));
      return;
    }
    if (items) for (let index = 0; index < data.length; index++) items(data[index], `${path}/${index}`, errors);
  };
}

function compileObject(schema: SchemaNode): Check | undefined {
  const max = schema.maxProperties;
  const declared = Object.entries(schema.properties ?? {});
  const known = new Set(declared.map(([name]) => name));
  const members = declared.flatMap(([name, member]) => {
    const check = compileNode(member);
    return check ? [[name, check] as const] : [];
  });
  // As Ajv compiles them (unicode regular expressions).
  const patterns = Object.entries(schema.patternProperties ?? {}).map(
    ([source, member]) => [new RegExp(source, 'u'), compileNode(member)] as const,
  );
  const closed = schema.additionalProperties === false;
  const others = compileNode(schema.additionalProperties);
  const patternChecks = patterns.some(([, check]) => check);
  if (max === undefined && !closed && members.length === 0 && !others && !patternChecks) return undefined;

  return (data, path, errors) => {
    if (!isRecord(data)) return;
    // Enumerating a huge object's members costs about as much as parsing it: only when a bound needs it.
    const names = max !== undefined || closed || others || patternChecks ? Object.keys(data) : [];
    if (max !== undefined && names.length > max) {
      errors.push(sizeError('maxProperties', path, schema, { limit: max }));
      return;
    }
    if (closed) {
      // A few unknown members are reported by Ajv with everything else; a flood of them is named up to
      // the problem's cap and counted beyond it. One pass, keeping no more names than are reported.
      const named: string[] = [];
      let refused = 0;
      for (const name of names) {
        if (known.has(name) || patterns.some(([pattern]) => pattern.test(name))) continue;
        refused += 1;
        if (named.length < MAX_FIELD_ERRORS) named.push(name);
      }
      if (refused > MAX_FIELD_ERRORS) {
        for (const name of named)
          errors.push(sizeError('additionalProperties', path, schema, { additionalProperty: name }));
        errors.push(sizeError(OMITTED_KEYWORD, path, schema, { count: refused - MAX_FIELD_ERRORS }));
        return;
      }
    }
    for (const [name, check] of members) if (Object.hasOwn(data, name)) check(data[name], pointer(path, name), errors);
    if (!others && !patternChecks) return;
    for (const name of names) {
      if (known.has(name)) continue;
      const matching = patterns.filter(([pattern]) => pattern.test(name));
      for (const [, check] of matching) check?.(data[name], pointer(path, name), errors);
      if (matching.length === 0) others?.(data[name], pointer(path, name), errors);
    }
  };
}

function compileUnions(schema: SchemaNode): (Check | undefined)[] {
  const all = (schema.allOf ?? []).map(compileNode);
  const tag = schema.discriminator?.propertyName;
  if (tag !== undefined && schema.oneOf) {
    // The tag picks the one branch Ajv validates (and reports), so only its bounds apply.
    const branches = new Map<unknown, Check | undefined>(
      schema.oneOf.map((branch) => [(branch as SchemaNode).properties?.[tag] as unknown, compileNode(branch)]),
    );
    const byTag = new Map<unknown, Check>();
    for (const [tagSchema, check] of branches) {
      const value = isRecord(tagSchema) ? tagSchema.const : undefined;
      if (check && value !== undefined) byTag.set(value, check);
    }
    if (byTag.size === 0) return all;
    return [
      ...all,
      (data, path, errors) => {
        if (isRecord(data)) byTag.get(data[tag])?.(data, path, errors);
      },
    ];
  }
  return [...all, unionCheck(schema.oneOf), unionCheck(schema.anyOf)];
}

/**
 * A value may match any branch of a union: it is refused here only when every branch finds a bound
 * exceeded (a branch without bounds never does), and then with the first branch's errors.
 */
function unionCheck(branches: unknown[] | undefined): Check | undefined {
  const alternatives = (branches ?? []).map(compileNode);
  if (!alternatives.some((check) => check)) return undefined;
  return (data, path, errors) => {
    let first: ErrorObject[] | undefined;
    for (const check of alternatives) {
      const found: ErrorObject[] = [];
      check?.(data, path, found);
      if (found.length === 0) return;
      first ??= found;
    }
    if (first) errors.push(...first);
  };
}
