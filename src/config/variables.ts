/**
 * The kinds of environment variable the configuration declares (src/config.ts). A variable is a TypeBox schema
 * of its value (type, constraints, description), a strict reader from the variable's text to that value, and
 * the sentence that says what a valid value looks like; the same declaration yields the typed value, the
 * error that names the variable, and the README's configuration table (src/config/table.ts).
 */
import { type Static, type TSchema, Type } from 'typebox';
import { parseDuration } from './duration.js';

export interface Variable<S extends TSchema = TSchema, Optional extends boolean = boolean> {
  /** The value's type and constraints (its `description` too). */
  readonly schema: S;
  /** What the variable is for: the README's "Meaning". */
  readonly description: string;
  /** Text to value; undefined when the text cannot be read as this kind (never a guess such as 0). */
  readonly read: (text: string) => Static<S> | undefined;
  /** What a valid value looks like: the end of the error message and the README's "Value" column. */
  readonly accepts: string;
  /** The text used when the variable is unset or blank; undefined: the value is undefined. */
  readonly default: string | undefined;
  /** The README's "Default" when it is not the default text (derived from other variables, generated…). */
  readonly defaultText: string | undefined;
  /** Never echoed in an error (keys, tokens, connection strings with passwords). */
  readonly secret: boolean;
  /** Phantom: whether the value may be undefined. */
  readonly optional?: Optional;
}

interface Common {
  readonly description: string;
  readonly defaultText?: string;
  readonly secret?: boolean;
}
type WithDefault<D> = Common & { readonly default: D };
type Unset = Common & { readonly default?: undefined };
type OptionalOf<O> = O extends { readonly default: string | number } ? false : true;

function variable<S extends TSchema, O extends Common & { readonly default?: string | number }>(
  schema: S,
  options: O,
  accepts: string,
  read: (text: string) => Static<S> | undefined,
): Variable<S, OptionalOf<O>> {
  return {
    schema,
    description: options.description,
    read,
    accepts,
    default: options.default === undefined ? undefined : String(options.default),
    defaultText: options.defaultText,
    secret: options.secret ?? false,
  };
}

const INTEGER = /^-?\d+$/;

export function integer<O extends WithDefault<number> | Unset>(
  options: O & { readonly minimum: number; readonly maximum: number },
) {
  const { minimum, maximum, description } = options;
  return variable(
    Type.Integer({ minimum, maximum, description }),
    options,
    `an integer from ${minimum} to ${maximum}`,
    (text) => (INTEGER.test(text) ? Number(text) : undefined),
  );
}

/** Free text, optionally with a minimum length, a pattern or a check of its own (`accepts` then says which). */
export function text<O extends WithDefault<string> | Unset>(
  options: O & {
    readonly minLength?: number;
    readonly pattern?: string;
    readonly check?: (value: string) => boolean;
    readonly accepts?: string;
    /** Applied to the text before it is checked, e.g. turning `\n` escapes into line breaks. */
    readonly map?: (value: string) => string;
  },
) {
  const { minLength, pattern, description, check, map = (value: string) => value } = options;
  const schema = Type.String({ minLength, pattern, description });
  const accepts = options.accepts ?? (minLength === undefined ? 'text' : `at least ${minLength} characters`);
  return variable(check ? Type.Refine(schema, check) : schema, options, accepts, map);
}

export function oneOf<const Values extends string[], O extends WithDefault<Values[number]>>(
  values: readonly [...Values],
  options: O,
) {
  const schema = Type.Enum(values, { description: options.description });
  return variable(schema, options, `one of ${values.join(', ')}`, (text) => text as Values[number]);
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** An absolute http(s) URL, kept without its trailing slashes so that paths are appended to it. */
export function url<O extends Unset>(options: O) {
  const schema = Type.Refine(Type.String({ description: options.description }), isHttpUrl);
  return variable(schema, options, 'an absolute http(s) URL', (text) => text.replace(/\/+$/, ''));
}

const DURATION_FORMS = 'a number and ms, s, m, h or d (a bare number is milliseconds)';

/** Milliseconds, written as a duration (src/config/duration.ts). */
export function duration<O extends WithDefault<string>>(
  options: O & { readonly minimum?: number; readonly maximum?: number },
) {
  const { minimum = 0, maximum, description } = options;
  const schema = Type.Integer({ minimum, maximum, description });
  return variable(schema, options, `a duration such as 3d: ${DURATION_FORMS}`, parseDuration);
}

/** A comma-separated list of durations, in milliseconds. */
export function durationList<O extends WithDefault<string>>(options: O) {
  const schema = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, description: options.description });
  return variable(
    schema,
    options,
    `a comma-separated list of durations such as 5s,5m,30m,2h: ${DURATION_FORMS}`,
    (text) => {
      const values = text.split(',').map(parseDuration);
      return values.every((value) => value !== undefined) ? (values as number[]) : undefined;
    },
  );
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** `host:port` pairs (host names lower-cased, IPv6 addresses in brackets). */
export function hostPortList<O extends WithDefault<string>>(options: O) {
  const entry = Type.String({ pattern: '^[^:\\s]+:\\d{1,5}$|^\\[[0-9a-f:.]+\\]:\\d{1,5}$' });
  const schema = Type.Array(entry, { description: options.description });
  return variable(schema, options, 'a comma-separated list of host:port', (text) =>
    list(text).map((item) => item.toLowerCase()),
  );
}

/** Fastify's trustProxy: off, on, a hop count, or the addresses and CIDRs of trusted proxies. */
export function trustProxy<O extends WithDefault<string>>(options: O) {
  const address = Type.String({ pattern: '^[0-9a-fA-F:.]+(/\\d{1,3})?$' });
  const schema = Type.Union([Type.Boolean(), Type.Integer({ minimum: 0 }), Type.Array(address, { minItems: 1 })], {
    description: options.description,
  });
  const accepts = 'off, on, a hop count, or a comma-separated list of addresses/CIDRs';
  return variable(schema, options, accepts, (text) => {
    if (text === 'false' || text === 'off') return false;
    if (text === 'true' || text === 'on') return true;
    return INTEGER.test(text) ? Number(text) : list(text);
  });
}
