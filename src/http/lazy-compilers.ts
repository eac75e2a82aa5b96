/**
 * Route schemas compiled on first use instead of at start. Fastify compiles every route's validators
 * (Ajv) and response serialisers (fast-json-stringify) while it gets ready: about half a second of CPU
 * for this API's routes, which every start paid before it could answer /ready, for routes a process may
 * never serve. Each route now pays its own compilation (a few milliseconds) on its first request.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ValidateFunction } from 'ajv';

/** An Ajv-style validator that compiles itself when first called (Fastify reads `.errors` off it). */
export function lazyValidator(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined;
  const lazy = ((data: unknown) => {
    validate ??= compile();
    const valid = validate(data);
    lazy.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return lazy;
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own serialiser factory (fast-json-stringify, with the schemas added by addSchema), each
 * route's serialiser built on its first response. For `schemaController.compilersFactory.buildSerializer`.
 */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc) => {
      serialize ??= compile(route);
      return serialize(doc);
    };
  };
};
