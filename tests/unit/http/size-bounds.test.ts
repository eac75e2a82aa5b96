/** The size check run before Ajv (src/http/size-bounds.ts) and the cap on the fields a problem names. */
import { describe, expect, it } from 'vitest';
import { MAX_DETAIL, MAX_FIELD_ERRORS, Problem, validationProblem } from '../../../src/http/problem.js';
import { compileSizeCheck, OMITTED_KEYWORD } from '../../../src/http/size-bounds.js';
import { validationProblemFromAjv } from '../../../src/http/validation-errors.js';
import { compileBodyValidator } from '../../../src/http/validation.js';

const brief = (errors: ReturnType<ReturnType<typeof compileSizeCheck>>) =>
  errors?.map((error) => ({ keyword: error.keyword, at: error.instancePath, params: error.params })) ?? null;

describe('compileSizeCheck', () => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      ids: { type: 'array', maxItems: 3, items: { type: 'integer' } },
      rows: {
        type: 'array',
        maxItems: 2,
        items: { type: 'object', properties: { tags: { type: 'array', maxItems: 1 } } },
      },
      labels: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string' } },
      byPattern: { type: 'object', patternProperties: { '^x-': { type: 'array', maxItems: 1 } } },
      either: { anyOf: [{ type: 'array', maxItems: 1 }, { type: 'string' }] },
      arrays: {
        anyOf: [
          { type: 'array', maxItems: 1 },
          { type: 'array', maxItems: 2 },
        ],
      },
    },
  };
  const check = compileSizeCheck(schema);

  it('passes a body within every bound, whatever else is wrong with it', () => {
    expect(check({ ids: ['a', 'b', 'c'], rows: [{ tags: [1] }], labels: { a: 1 }, either: 'x' })).toBeNull();
    expect(check('not an object')).toBeNull();
    expect(check({ ids: 'not a list', labels: [] })).toBeNull();
  });

  it('names each list and map over its bound, and looks no further into them', () => {
    expect(brief(check({ ids: Array(10).fill('x'), labels: { a: '', b: '', c: '' } }))).toEqual([
      { keyword: 'maxItems', at: '/ids', params: { limit: 3 } },
      { keyword: 'maxProperties', at: '/labels', params: { limit: 2 } },
    ]);
    // The rows are over their bound: the tags inside them are not looked at.
    expect(brief(check({ rows: Array(3).fill({ tags: [1, 2] }) }))).toEqual([
      { keyword: 'maxItems', at: '/rows', params: { limit: 2 } },
    ]);
  });

  it('looks into the items of a list within its bound, and into pattern members', () => {
    expect(brief(check({ rows: [{ tags: [] }, { tags: [1, 2] }], byPattern: { 'x-a': [1, 2], y: [1, 2] } }))).toEqual([
      { keyword: 'maxItems', at: '/rows/1/tags', params: { limit: 1 } },
      { keyword: 'maxItems', at: '/byPattern/x-a', params: { limit: 1 } },
    ]);
  });

  it('refuses a union only when every branch finds a bound exceeded', () => {
    expect(check({ either: [1, 2] })).toBeNull();
    expect(check({ arrays: [1, 2] })).toBeNull();
    expect(brief(check({ arrays: [1, 2, 3] }))).toEqual([{ keyword: 'maxItems', at: '/arrays', params: { limit: 1 } }]);
  });

  it('names the first unknown members of a flood of them, and counts the rest', () => {
    const body = Object.fromEntries(Array.from({ length: 1_000 }, (_, index) => [`u${index}`, 0]));
    const errors = check({ ids: [], ...body })!;
    expect(errors).toHaveLength(MAX_FIELD_ERRORS + 1);
    expect(errors[0]).toMatchObject({ keyword: 'additionalProperties', params: { additionalProperty: 'u0' } });
    expect(errors.at(-1)).toMatchObject({ keyword: OMITTED_KEYWORD, params: { count: 1_000 - MAX_FIELD_ERRORS } });
    // A few unknown members are left to Ajv, which reports them with everything else.
    expect(check({ u1: 0, u2: 0 })).toBeNull();
  });

  it('checks the one branch a discriminator picks', () => {
    const union = compileSizeCheck({
      type: 'object',
      discriminator: { propertyName: 'kind' },
      oneOf: [
        { type: 'object', properties: { kind: { const: 'a' }, list: { type: 'array', maxItems: 1 } } },
        { type: 'object', properties: { kind: { const: 'b' }, list: { type: 'array', maxItems: 5 } } },
      ],
    });
    expect(brief(union({ kind: 'a', list: [1, 2] }))).toEqual([
      { keyword: 'maxItems', at: '/list', params: { limit: 1 } },
    ]);
    expect(union({ kind: 'b', list: [1, 2] })).toBeNull();
    expect(union({ kind: 'c', list: [1, 2] })).toBeNull();
  });

  it('checks nothing in a schema without bounds', () => {
    expect(compileSizeCheck({ type: 'object', properties: { a: { type: 'string' } } })(Array(5))).toBeNull();
  });
});

describe('the body validator and its problem', () => {
  const validate = compileBodyValidator({
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string' }, ids: { type: 'array', maxItems: 2, items: { type: 'integer' } } },
  });

  it('refuses a list over its bound by the bound alone (not the missing name, not the items)', () => {
    expect(validate({ ids: Array(100_000).fill('x') })).toBe(false);
    const problem = validationProblemFromAjv(validate.errors!);
    expect(problem.errors).toEqual({ ids: ['must have at most 2 entries'] });
    expect(problem.extensions).toEqual({});
  });

  it('within the bounds, Ajv reports every failing field', () => {
    expect(validate({ ids: ['x', 1] })).toBe(false);
    expect(validationProblemFromAjv(validate.errors!).errors).toEqual({
      name: ['is required'],
      'ids[0]': ['must be an integer'],
    });
  });

  it('names the first 50 of a flood of unknown members, and counts the others', () => {
    const body = Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`u${index}`, 0]));
    expect(validate({ name: 'x', ...body })).toBe(false);
    const problem = validationProblemFromAjv(validate.errors!);
    expect(Object.keys(problem.errors!)).toHaveLength(MAX_FIELD_ERRORS);
    expect(problem.extensions).toEqual({ errorsOmitted: 450 });
    expect(problem.detail).toBe(
      'The request has 500 invalid fields: u0, u1, u2, u3, u4, u5, u6, u7, u8, u9 and 490 more; errors names the first 50.',
    );
  });
});

describe('validationProblem', () => {
  it('names every field up to the cap, ten of them in detail', () => {
    const errors = Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`f${index}`, ['is invalid']]));
    const problem = validationProblem(errors);
    expect(Object.keys(problem.errors!)).toHaveLength(12);
    expect(problem.extensions).toEqual({});
    expect(problem.detail).toBe(
      'The request has 12 invalid fields: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 2 more, named in errors.',
    );
    expect(validationProblem({ a: ['x'], b: ['y'] }).detail).toBe('The request has 2 invalid fields: a, b.');
    expect(validationProblem({ a: ['x'] }).detail).toBe('The request has an invalid field: a.');
  });

  it('describes a long field name rather than repeating it, and counts the fields past the cap', () => {
    const long = 'n'.repeat(10_000);
    const errors = Object.fromEntries([
      [long, ['is not a known field']],
      ...Array.from({ length: 99 }, (_, index) => [`f${index}`, ['is invalid']]),
    ]);
    const problem = validationProblem(errors);
    expect(Object.keys(problem.errors!)[0]).toBe('request');
    expect(problem.errors!.request).toEqual([
      'has a field with a name of 10000 characters, more than the 100 repeated, not repeated here: is not a known field',
    ]);
    expect(Object.keys(problem.errors!)).toHaveLength(MAX_FIELD_ERRORS);
    expect(problem.extensions).toEqual({ errorsOmitted: 50 });
    expect(problem.detail.length).toBeLessThan(400);
  });
});

describe("a problem's detail", () => {
  it('is cut at MAX_DETAIL wherever it was built, so no problem grows with the request', () => {
    const problem = new Problem('not-found', `No such thing: ${'x'.repeat(50_000)}.`);
    expect(problem.detail).toHaveLength(MAX_DETAIL + 1);
    expect(problem.detail.endsWith('…')).toBe(true);
    expect(problem.message).toBe(problem.detail);
  });

  it('is kept whole below it', () => {
    expect(new Problem('not-found', 'Site was not found.').detail).toBe('Site was not found.');
  });
});
