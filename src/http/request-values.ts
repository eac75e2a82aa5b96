/**
 * Values a request may not carry although their JSON type is right: text the database cannot store or
 * would store as something else (U+0000, lone surrogates, and the bytes of a query that are not UTF-8,
 * which the query parser turns into lone surrogates), date-times outside the range both databases hold
 * exactly, and integer parameters not written in plain digits. Used by the validators (validation.ts):
 * every route's path, query and body goes through them.
 */
import type { ErrorObject } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
export const ILL_FORMED_MESSAGE =
  'must be valid Unicode text: it holds a lone surrogate (U+D800 to U+DFFF), or bytes that are not UTF-8';

/** Why the database cannot hold this text as sent, or undefined when it can. */
export function unstorableText(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_MESSAGE;
  // Not well formed: a UTF-16 code unit of a surrogate pair without its other half.
  if (!text.isWellFormed()) return ILL_FORMED_MESSAGE;
  return undefined;
}

/**
 * The reason unstorableText gives for the first string (or member name) it refuses, in document order, or
 * undefined. The path to it is pushed onto `path` on the way back out, innermost first: nothing is built
 * for the values that pass, which are nearly all of them.
 */
function firstUnstorable(value: unknown, path: string[]): string | undefined {
  if (typeof value === 'string') return unstorableText(value);
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const message = firstUnstorable(value[index], path);
      if (message === undefined) continue;
      path.push(String(index));
      return message;
    }
    return undefined;
  }
  for (const name of Object.keys(value)) {
    const message = unstorableText(name) ?? firstUnstorable((value as Record<string, unknown>)[name], path);
    if (message === undefined) continue;
    path.push(name);
    return message;
  }
  return undefined;
}

/** A JSON pointer (RFC 6901) of the path's names, given innermost first. */
function pointerOf(innermostFirst: readonly string[]): string {
  let pointer = '';
  for (let index = innermostFirst.length - 1; index >= 0; index--)
    pointer += `/${escapePointer(innermostFirst[index]!)}`;
  return pointer;
}

/** The JSON pointer and reason of the first string (or member name) that unstorableText refuses. */
function unstorablePointer(value: unknown): { pointer: string; message: string } | undefined {
  const path: string[] = [];
  const message = firstUnstorable(value, path);
  return message === undefined ? undefined : { pointer: pointerOf(path), message };
}

/** A member name as a segment of a JSON pointer (RFC 6901): `~` and `/` escaped. */
export function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The names of a JSON pointer (RFC 6901) such as Ajv's instancePath: `~1` read as `/`, then `~0` as `~`. */
export function pointerNames(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The error for the first string no PostgreSQL text can hold as sent, or undefined. U+0000 fails the
 * statement (a 500, or a whole batch of a batched read); a lone surrogate is stored as U+FFFD, so the
 * stored value differs from the one answered and two values collide (`SC-\ud800`, `SC-\udfff`).
 */
export function unstorableTextError(data: unknown): ErrorObject | undefined {
  const found = unstorablePointer(data);
  if (found === undefined) return undefined;
  return { keyword: 'text', instancePath: found.pointer, schemaPath: '#', params: {}, message: found.message };
}

/**
 * Date-times from 1900-01-01T00:00:00Z through 9999-12-31T23:59:59Z, compared in UTC. Both databases
 * hold these exactly and print them with four-digit years; year 0 (which PostgreSQL has not) or a
 * five-digit year is refused as invalid input instead of failing the statement or being stored as BC.
 */
export const DATE_TIME_MIN = '1900-01-01T00:00:00Z';
export const DATE_TIME_MAX = '9999-12-31T23:59:59Z';
export const DATE_TIME_RANGE_TEXT = `from ${DATE_TIME_MIN} through ${DATE_TIME_MAX} (compared in UTC)`;
export const DATE_TIME_MESSAGE = `must be an ISO 8601 date-time with a time zone, ${DATE_TIME_RANGE_TEXT}, e.g. 2026-11-22T09:00:00Z`;

const MIN_MS = Date.parse(DATE_TIME_MIN);
const MAX_MS = Date.parse(DATE_TIME_MAX);
const rfc3339DateTime = fullFormats['date-time'] as { validate: (value: string) => boolean };

/** Within the range, for a string the RFC 3339 check (ajv-formats' `date-time`) already accepted. */
function inDateTimeRange(value: string): boolean {
  // The instant to the millisecond (Date.parse reads four-digit years as written, offsets applied). NaN for
  // what JavaScript cannot read (a leap second; `+01`, an offset without minutes that ajv-formats lets
  // through): refused too, or the code reading the value would hand the database an invalid date (a 500).
  const milliseconds = Date.parse(value);
  if (Number.isNaN(milliseconds)) return false;
  // Digits beyond the milliseconds only add to the instant: they matter at the upper edge alone.
  const beyondMax = milliseconds > MAX_MS || (milliseconds === MAX_MS && /\.\d*[1-9]/.test(value));
  return milliseconds >= MIN_MS && !beyondMax;
}

/**
 * The `date-time` format of every request schema: RFC 3339 with a time zone that JavaScript reads, within
 * the range above.
 */
export const boundedDateTimeFormat = {
  type: 'string' as const,
  validate: (value: string) => rfc3339DateTime.validate(value) && inDateTimeRange(value),
};

export const DIGITS_MESSAGE = 'must be an integer written in plain digits, e.g. 25';
const PLAIN_INTEGER = /^-?[0-9]+$/;

/**
 * The parameters (path or query) whose schema is an integer. Coercion reads them as `Number()` does,
 * which takes `0x10`, `1e1`, `+5` and ` 5`; their raw text is checked before that (integerSpellingErrors).
 */
export function integerParameters(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}

/** An error for each integer parameter sent as text other than plain digits (an optional minus). */
export function integerSpellingErrors(data: unknown, names: readonly string[]): ErrorObject[] {
  if (names.length === 0 || data === null || typeof data !== 'object') return [];
  const values = data as Record<string, unknown>;
  return names
    .filter((name) => {
      const raw = values[name];
      return typeof raw === 'string' && !PLAIN_INTEGER.test(raw);
    })
    .map((name) => ({
      keyword: 'digits',
      instancePath: `/${escapePointer(name)}`,
      schemaPath: '#',
      params: {},
      message: DIGITS_MESSAGE,
    }));
}
