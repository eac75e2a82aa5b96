/**
 * Reads declared variables (src/config/variables.ts) from an environment: every variable that cannot be read
 * or breaks its schema's constraints is one problem naming it, and the rules between variables are checked
 * once each variable is valid on its own. All problems are reported together.
 */
import type { Static } from 'typebox';
import Value from 'typebox/value';
import type { Variable } from './variables.js';

export type Env = Record<string, string | undefined>;
export type Variables = Record<string, Variable>;

/** The typed values of declared variables: undefined only for a variable without a default. */
export type ValuesOf<V extends Variables> = {
  readonly [K in keyof V]: V[K] extends Variable<infer S, infer Optional>
    ? Optional extends true
      ? Static<S> | undefined
      : Static<S>
    : never;
};

/** A rule between variables: `variable` and `says` make the problem ("APP_SECRET must be set in production"). */
export interface Rule<V extends Variables> {
  readonly variable: keyof V & string;
  readonly says: string;
  readonly broken: (values: ValuesOf<V>) => boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** The variable's text: trimmed, and undefined when unset or blank (an empty variable means "use the default"). */
function given(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function readVariables<V extends Variables>(variables: V, rules: readonly Rule<V>[], env: Env): ValuesOf<V> {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(variables)) {
    const text = given(env, name) ?? variable.default;
    if (text === undefined) continue;
    const value = variable.read(text);
    if (value === undefined || !Value.Check(variable.schema, value)) {
      problems.push(`${name} must be ${variable.accepts}${variable.secret ? '' : ` (got "${text}")`}`);
    }
    values[name] = value;
  }
  if (problems.length === 0) {
    for (const rule of rules) {
      if (rule.broken(values as ValuesOf<V>)) problems.push(`${rule.variable} ${rule.says}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return values as ValuesOf<V>;
}

export type DeepReadonly<T> = T extends (infer Item)[]
  ? readonly DeepReadonly<Item>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value as DeepReadonly<T>;
}
