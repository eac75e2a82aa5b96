/**
 * What each of Ajv's failures says in a validation problem: one readable message per keyword, written for
 * the integrator (`must be a string or null`, `must be one of: a; b`), from the schema the value failed.
 */
import type { ErrorObject } from 'ajv';
import { DATE_TIME_MESSAGE } from './request-values.js';

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function describeTypes(schema: unknown): string {
  const branches = (schema as { anyOf?: unknown[] })?.anyOf ?? [schema];
  const names = branches.flatMap((branch) => {
    const b = branch as { type?: string | string[]; const?: unknown; enum?: unknown[] };
    if (b.const !== undefined) return [JSON.stringify(b.const)];
    if (b.enum) return b.enum.map((value) => JSON.stringify(value));
    const types = Array.isArray(b.type) ? b.type : b.type ? [b.type] : [];
    return types.map((type) => TYPE_NAMES[type] ?? type);
  });
  return [...new Set(names)].join(' or ') || 'a valid value';
}

/** The tag values a discriminated union accepts, from its oneOf branches' `const`s. */
export function discriminatorValues(schema: unknown, tag: string): string[] {
  const branches =
    (schema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] } | undefined)?.oneOf ?? [];
  return branches
    .map((branch) => branch.properties?.[tag]?.const)
    .filter((value): value is string => typeof value === 'string');
}

/** What a failure other than a member's (required, unknown, a union's tag) says, one readable sentence end. */
export function ajvMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return error.data === null
        ? `must be ${describeTypes(error.parentSchema)}, not null`
        : `must be ${describeTypes(error.parentSchema)}`;
    case 'enum': {
      const allowed = params.allowedValues as unknown[];
      const values = allowed.filter((value) => value !== null).map((value) => String(value));
      return `must be one of: ${values.join('; ')}${allowed.includes(null) ? ' (or null)' : ''}`;
    }
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'anyOf':
      return `must be ${describeTypes(error.parentSchema)}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters`;
    case 'maxLength':
      return `must be at most ${params.limit} characters`;
    case 'minimum':
      return `must be at least ${params.limit}`;
    case 'maximum':
      return `must be at most ${params.limit}`;
    case 'minItems':
      return params.limit === 1 ? 'must not be empty' : `must have at least ${params.limit} entries`;
    case 'maxItems':
      return `must have at most ${params.limit} entries`;
    case 'maxProperties':
      return `must have at most ${params.limit} members`;
    case 'uniqueItems':
      return 'must not contain duplicates';
    case 'format':
      return params.format === 'date-time'
        ? DATE_TIME_MESSAGE
        : params.format === 'date'
          ? 'must be a date such as 2026-11-22'
          : `must be a valid ${params.format}`;
    case 'pattern': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return description ? `must match the expected format (${description})` : 'must match the expected format';
    }
    default:
      return error.message ?? 'is invalid';
  }
}
