/**
 * Named schemas of an OpenAPI document (components.schemas). Routes keep validating and serialising with
 * their own inline schemas, untouched; only the document names each resource and shared shape once and
 * shows a `$ref` to it wherever a route's body or response, or another named schema, holds an equal one.
 * Generators then turn a Site into one `Site` type instead of one type per operation.
 *
 * Equality is structural (the same JSON, member order aside), so a schema copied by spreading
 * (`{...SiteDocument, headers}`) or rebuilt by Type.Partial is still recognised, and what validates a
 * request is exactly what the document describes.
 */
import type { TSchema } from 'typebox';

/** A schema as JSON (openapi.ts walks the document the same way). */
// biome-ignore lint/suspicious/noExplicitAny: schemas are walked as loose JSON.
type JsonObject = Record<string, any>;

/** One named schema and the example shown with it (resources and events carry one). */
export interface ComponentDefinition {
  schema: TSchema;
  example?: unknown;
}

export type ComponentDefinitions = Record<string, ComponentDefinition>;

export const COMPONENT_SCHEMAS_PATH = '#/components/schemas/';

/** Keywords whose value is a schema, or an array of schemas. */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'prefixItems',
  'additionalItems',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'allOf',
  'anyOf',
  'oneOf',
]);

/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

type Position = 'schema' | 'map' | 'data';

interface Walked {
  /** Canonical JSON of the original value: members sorted, symbols and undefined left out. */
  key: string;
  /** The value as the document shows it: plain JSON, named schemas replaced by references. */
  shown: unknown;
}

export class ComponentIndex {
  private readonly names = new Map<string, string>();

  constructor(readonly definitions: ComponentDefinitions) {
    for (const [name, { schema }] of Object.entries(definitions)) {
      const { key } = this.walk(schema, 'data');
      const existing = this.names.get(key);
      // Two names for one shape would make the document's choice between them arbitrary.
      if (existing !== undefined) throw new Error(`The components ${existing} and ${name} are the same schema`);
      this.names.set(key, name);
    }
  }

  /** A route's body or response schema as the document shows it (itself a reference when it is named). */
  reference(schema: unknown): JsonObject {
    return this.walk(schema, 'schema').shown as JsonObject;
  }

  /** The named schemas as components.schemas shows them: each with its example, nested named ones referenced. */
  components(): Record<string, JsonObject> {
    const shown: Record<string, JsonObject> = {};
    for (const [name, { schema, example }] of Object.entries(this.definitions)) {
      const component = this.walk(schema, 'schema', name).shown as JsonObject;
      shown[name] = example === undefined ? component : { ...component, examples: [example] };
    }
    return shown;
  }

  private walk(value: unknown, position: Position, self?: string): Walked {
    if (value === null || typeof value !== 'object') return { key: JSON.stringify(value), shown: value };
    if (Array.isArray(value)) {
      const items = value.map((item) => this.walk(item, position));
      return { key: `[${items.map((item) => item.key).join(',')}]`, shown: items.map((item) => item.shown) };
    }
    const keys: string[] = [];
    const shown: JsonObject = {};
    for (const name of Object.keys(value)) {
      const member = (value as JsonObject)[name];
      if (member === undefined) continue;
      const childPosition: Position =
        position === 'map'
          ? 'schema'
          : position === 'data'
            ? 'data'
            : SCHEMA_KEYWORDS.has(name)
              ? 'schema'
              : SCHEMA_MAP_KEYWORDS.has(name)
                ? 'map'
                : 'data';
      const child = this.walk(member, childPosition);
      keys.push(`${JSON.stringify(name)}:${child.key}`);
      shown[name] = child.shown;
    }
    const key = `{${keys.sort().join(',')}}`;
    if (position !== 'schema') return { key, shown };
    const name = this.names.get(key);
    return { key, shown: name !== undefined && name !== self ? { $ref: COMPONENT_SCHEMAS_PATH + name } : shown };
  }
}
