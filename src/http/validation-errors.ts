/**
 * Ajv's errors (and the size check's, and the other checks' of validation.ts) as the `errors` map of a 422
 * validation problem: each failure filed under the field it names, with its message (validation-messages.ts).
 * A field's name is made of names the request chose (unknown members, a map's keys, query parameters), so
 * it follows the rule of request-names.ts: it is repeated only while each name in it, and the whole, is
 * printable and short; a failure below a name that is not is filed under the field holding that name (the
 * root, `body` or `querystring`, at the top), its message saying what the name holds or how long it is.
 */
import type { ErrorObject } from 'ajv';
import { type FieldErrors, type Problem, validationProblem } from './problem.js';
import { whyNotShown } from './request-names.js';
import { pointerNames } from './request-values.js';
import { OMITTED_KEYWORD } from './size-bounds.js';
import { ajvMessage, discriminatorValues } from './validation-messages.js';

/** Fields that responses carry but no request may write; naming them in a body says so plainly. */
const READ_ONLY_FIELDS = new Set([
  'id',
  'clientId',
  // Writable on messages, whose schema declares it; read-only everywhere else.
  'status',
  'createdAt',
  'updatedAt',
  'svcPm',
  'recordOwner',
  'method',
  'occurredAt',
  'assetsToService',
  'siteVisitAssets',
  'returnLabel',
  'fileAttachment',
  'tenantId',
]);

/**
 * Names body members that a create accepts and a patch may not change (`'x-immutable': ['siteVisitId']`
 * on the patch body, beside `additionalProperties: false`), so that sending one says so plainly rather
 * than calling it unknown. The keyword also shows in the OpenAPI document.
 */
export const IMMUTABLE_KEYWORD = 'x-immutable';

/** What the names of each part of the request are called, in a message about one that is not repeated. */
const NAMES_OF: Record<string, [one: string, many: string]> = {
  body: ['member', 'members'],
  querystring: ['parameter', 'parameters'],
  headers: ['header', 'headers'],
  params: ['path parameter', 'path parameters'],
};

/** A failure filed: `withheld` identifies the name not repeated (the path down to it), if there is one. */
interface Filed {
  field: string;
  text: string;
  withheld?: string;
  kind?: string;
}

/**
 * The field a failure is filed under, with its message. `names` is the path to the failing value (an
 * instancePath's names, then the member the failure is about): joined as `a.b[0].c` while the rule lets
 * each name and the whole be repeated; else filed under the names before the first that is not.
 */
function filed(names: readonly string[], text: string, rootName: string): Filed {
  let field = '';
  for (const [index, name] of names.entries()) {
    const joined = /^\d+$/.test(name) && field ? `${field}[${name}]` : field ? `${field}.${name}` : name;
    const own = whyNotShown(name);
    const whole = own === undefined ? whyNotShown(joined) : undefined;
    if (own === undefined && whole === undefined) {
      field = joined;
      continue;
    }
    const [one, many] = (index === 0 ? NAMES_OF[rootName] : undefined) ?? ['member', 'members'];
    const why = own !== undefined ? `a name ${own}` : `a name that makes the field's name one ${whole}`;
    const within = index < names.length - 1 ? '; a field within it' : '';
    return {
      field: field || rootName,
      text: `has a ${one} with ${why}, not repeated here${within}: ${text}`,
      withheld: names.slice(0, index + 1).join('/'),
      kind: many,
    };
  }
  return { field: field || rootName, text };
}

/** The member a failure is about, below its instancePath, and its message. */
function childAndText(error: ErrorObject, rootName: string): [child: string | undefined, text: string] {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return [String(params.missingProperty), 'is required'];
    case 'discriminator': {
      // The tag member is missing, not a string, or names no branch.
      const tag = String(params.tag);
      const values = discriminatorValues(error.parentSchema, tag);
      return [tag, params.tagValue === undefined ? 'is required' : `must be one of: ${values.join('; ')}`];
    }
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const immutable = (error.parentSchema as Record<string, unknown> | undefined)?.[IMMUTABLE_KEYWORD];
      const topLevel = error.instancePath === '' && rootName === 'body';
      return [
        name,
        Array.isArray(immutable) && immutable.includes(name)
          ? 'is set on create and cannot be changed'
          : READ_ONLY_FIELDS.has(name) && topLevel
            ? 'is read-only and cannot be written'
            : 'is not a known field',
      ];
    }
    default:
      return [undefined, ajvMessage(error)];
  }
}

/**
 * Turns Ajv's errors into `field → messages`, one readable message per failure, and the count of the
 * members whose names were neither repeated nor described (counted under the field holding them).
 */
function fieldErrorsFromAjv(errors: readonly ErrorObject[], rootName: string): [FieldErrors, number] {
  // For a union (anyOf) report the union once, not each branch's complaint.
  const unions = errors.filter((error) => error.keyword === 'anyOf');
  // A value of the wrong type (null for an enum) is reported by its type alone, not also as "one of".
  const mistyped = new Set(errors.filter((error) => error.keyword === 'type').map((error) => error.instancePath));
  const relevant = errors.filter(
    (error) =>
      (error.keyword === 'anyOf' ||
        !unions.some(
          (union) => error.instancePath === union.instancePath && error.schemaPath.startsWith(`${union.schemaPath}/`),
        )) &&
      !(error.keyword === 'enum' && mistyped.has(error.instancePath)),
  );
  // Field names come from the request (unknown query parameters and members): a plain object would hand
  // back Object.prototype's `valueOf` or `__proto__` for them, so the map has no prototype.
  const result: FieldErrors = Object.create(null) as FieldErrors;
  const add = (name: string, text: string) => {
    // Headers are named as documented (`If-Match`, `Idempotency-Key`), not as Node lower-cases them.
    const field =
      rootName === 'headers'
        ? name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase())
        : name;
    const list = result[field] ?? [];
    result[field] = list;
    if (!list.includes(text)) list.push(text);
  };
  // Under each field, the first name not repeated is described; the others are counted (each message
  // names a position or a length, so that describing them all would grow with the request).
  const withheld = new Map<string, { first: string; others: Set<string>; kind: string }>();
  for (const error of relevant) {
    if (error.keyword === OMITTED_KEYWORD) continue;
    const [child, message] = childAndText(error, rootName);
    const names = pointerNames(error.instancePath);
    if (child !== undefined) names.push(child);
    const { field, text, withheld: name, kind = '' } = filed(names, message, rootName);
    if (name === undefined) {
      add(field, text);
      continue;
    }
    const seen = withheld.get(field);
    if (seen === undefined) withheld.set(field, { first: name, others: new Set(), kind });
    if (seen === undefined || seen.first === name) add(field, text);
    else seen.others.add(name);
  }
  let counted = 0;
  for (const [field, { others, kind }] of withheld) {
    if (others.size > 0) add(field, `has ${others.size} more ${kind} whose names are not repeated here either`);
    counted += others.size;
  }
  return [result, counted];
}

/**
 * The 422 problem for Ajv's errors (and the size check's): the fields named, and the count of those a
 * flood of unknown members left unnamed (size-bounds.ts) or whose names were only counted (above), so that
 * the problem says how many more failed.
 */
export function validationProblemFromAjv(errors: readonly ErrorObject[], rootName = 'body'): Problem {
  const flooded = errors.reduce(
    (count, error) => count + (error.keyword === OMITTED_KEYWORD ? Number(error.params.count) : 0),
    0,
  );
  const [fields, counted] = fieldErrorsFromAjv(errors, rootName);
  return validationProblem(fields, undefined, flooded + counted);
}
