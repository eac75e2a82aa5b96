/**
 * Each JSON route's body limit, derived from its body schema: the longest body the schema admits, written
 * with every character of every string written as a six-character escape (`\u00e9`), with room to spare for whitespace. A body
 * beyond it cannot be valid, so it is refused with 413 before it is read (on its Content-Length) or as soon
 * as it exceeds the limit, instead of being parsed and validated: a hostile client sending bodies of a
 * megabyte costs the service next to nothing, and an honest one never meets the limit.
 *
 * Where the schema bounds nothing (a string with no `maxLength`, a list with no `maxItems`, an open map),
 * the service-wide body limit applies.
 */
import type { Api } from './types.js';

/** The limit of any request body the service reads whole (uploads stream, with limits of their own). */
export const SERVICE_BODY_LIMIT = 1024 * 1024;

interface SchemaNode {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  maxLength?: number;
  format?: string;
  maxItems?: number;
  items?: unknown;
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
  patternProperties?: Record<string, unknown>;
  maxProperties?: number;
  anyOf?: unknown[];
  oneOf?: unknown[];
  allOf?: unknown[];
  content?: Record<string, unknown>;
}

/** The longest JSON text of a value this schema admits, minified, or Infinity where it bounds nothing. */
export function longestBody(schema: unknown): number {
  if (typeof schema !== 'object' || schema === null) return Number.POSITIVE_INFINITY;
  const node = schema as SchemaNode;
  if (node.const !== undefined) return escapedLength(node.const);
  if (node.enum) return Math.max(...node.enum.map(escapedLength));
  const branches = node.anyOf ?? node.oneOf;
  if (branches) return Math.max(...branches.map(longestBody));
  if (node.allOf) return Math.min(...node.allOf.map(longestBody));
  const types = Array.isArray(node.type) ? node.type : node.type ? [node.type] : [];
  if (types.length === 0) return Number.POSITIVE_INFINITY;
  return Math.max(...types.map((type) => longestOfType(type, node)));
}

/** Quotes plus six characters (an escape such as `\u00e9`) per UTF-16 unit: a code point beyond the BMP is two of them. */
const escapedString = (codePoints: number) => 2 + 12 * codePoints;

/** Every string in the value written escaped: what a client could legitimately send for a const or enum. */
function escapedLength(value: unknown): number {
  if (typeof value === 'string') return 2 + 6 * value.length;
  return JSON.stringify(value).length;
}

/** Formats whose every valid value has a bounded length, for strings that declare no maxLength. */
const FORMAT_LENGTHS: Record<string, number> = { uuid: 36, date: 10, 'date-time': 64 };

/** Digits of an integer or number as anyone writes them (an exponent included). */
const NUMBER_LENGTH = 32;

function longestOfType(type: string, node: SchemaNode): number {
  switch (type) {
    case 'null':
      return 4;
    case 'boolean':
      return 5;
    case 'integer':
    case 'number':
      return NUMBER_LENGTH;
    case 'string': {
      const length = node.maxLength ?? (node.format ? FORMAT_LENGTHS[node.format] : undefined);
      return length === undefined ? Number.POSITIVE_INFINITY : escapedString(length);
    }
    case 'array':
      if (node.maxItems === undefined) return Number.POSITIVE_INFINITY;
      return 2 + node.maxItems * (longestBody(node.items) + 1);
    case 'object':
      return longestObject(node);
    default:
      return Number.POSITIVE_INFINITY;
  }
}

function longestObject(node: SchemaNode): number {
  // A closed object: its declared members at most. An open one bounds nothing.
  if (node.additionalProperties !== false || node.patternProperties) return Number.POSITIVE_INFINITY;
  let total = 2;
  for (const [name, member] of Object.entries(node.properties ?? {})) {
    total += escapedLength(name) + 1 + longestBody(member) + 1;
  }
  return total;
}

/** Whitespace and formatting headroom over the longest minified body. */
const HEADROOM = 2;
/** No JSON route accepts less: a hand-written, pretty-printed small body always fits. */
const MIN_LIMIT = 16 * 1024;

/**
 * The body limit for a route with this body schema: twice its longest body, at least 16 KiB and at most
 * `serviceLimit`; undefined for a body that is not JSON (multipart uploads read their own limits).
 */
export function jsonBodyLimit(bodySchema: unknown, serviceLimit: number): number | undefined {
  if (typeof bodySchema !== 'object' || bodySchema === null) return undefined;
  const { content } = bodySchema as SchemaNode;
  if (content && Object.keys(content).some((mediaType) => !mediaType.includes('json'))) return undefined;
  const longest = longestBody(bodySchema);
  return Math.min(serviceLimit, Math.max(MIN_LIMIT, HEADROOM * longest));
}

/**
 * The 413's detail, and its description in the documents: the route's limit in bytes (a number, so the text
 * never grows with the body refused); without one, only that the body is too large.
 */
export function bodyTooLargeDetail(limit: number | undefined): string {
  const text = 'The request body is larger than this endpoint accepts';
  return limit === undefined ? `${text}.` : `${text} (at most ${limit} bytes).`;
}

/** Sets the limit of every JSON route registered after this call that does not set its own. */
export function registerSchemaBodyLimits(app: Api, serviceLimit = SERVICE_BODY_LIMIT): void {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= jsonBodyLimit(route.schema?.body, serviceLimit);
  });
}
