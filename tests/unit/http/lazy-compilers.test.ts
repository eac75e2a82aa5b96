/** Route schemas compiled on first use (src/http/lazy-compilers.ts). */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { lazySerializerFactory, lazyValidator } from '../../../src/http/lazy-compilers.js';

describe('lazyValidator', () => {
  it('compiles on the first call only, and carries each call’s errors as Fastify reads them', () => {
    let compiled = 0;
    const validate = lazyValidator(() => {
      compiled++;
      return new Ajv().compile({ type: 'object', required: ['name'] });
    });
    expect(compiled).toBe(0);
    expect(validate({})).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'required', params: { missingProperty: 'name' } });
    expect(validate({ name: 'x' })).toBe(true);
    expect(validate.errors).toBeNull();
    expect(compiled).toBe(1);
  });
});

describe('lazySerializerFactory', () => {
  it('serialises by the schema (unknown members left out), with shared schemas resolved by $ref', () => {
    const compile = lazySerializerFactory({
      'thing.json': { $id: 'thing.json', type: 'object', properties: { a: { type: 'integer' } } },
    });
    const serialize = compile({ method: 'GET', url: '/', httpStatus: '200', schema: { $ref: 'thing.json#' } });
    expect(serialize({ a: 1, secret: 'no' })).toBe('{"a":1}');
  });
});
