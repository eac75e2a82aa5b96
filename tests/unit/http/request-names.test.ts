/**
 * The one rule for a name of the request that a problem refers to (src/http/request-names.ts), and how the
 * validation problem files a failure under a name it does not repeat (src/http/validation-errors.ts).
 */
import { describe, expect, it } from 'vitest';
import { MAX_FIELD_ERRORS, validationProblem } from '../../../src/http/problem.js';
import { MAX_NAME, nameOrWhy, valueOrWhy, whyNotShown } from '../../../src/http/request-names.js';
import { escapePointer, pointerNames } from '../../../src/http/request-values.js';
import { validationProblemFromAjv } from '../../../src/http/validation-errors.js';
import { compileBodyValidator } from '../../../src/http/validation.js';

describe('whyNotShown', () => {
  it('repeats a printable name of at most MAX_NAME characters, spaces and any script included', () => {
    for (const name of ['siteCode', 'page[size]', 'a b', 'دوست', '名前', '😀'.repeat(MAX_NAME), 'x'.repeat(MAX_NAME)])
      expect(whyNotShown(name), name).toBeUndefined();
  });

  it.each([
    ['a NUL', 'a\u0000b', 'U+0000 at character 2'],
    ['an escape (C0)', '\u001b[2J', 'U+001B at character 1'],
    ['DEL', 'x\u007f', 'U+007F at character 2'],
    ['a C1 control', 'x\u0085', 'U+0085 at character 2'],
    ['a right-to-left override', 'invoice\u202efdp', 'U+202E at character 8'],
    ['an isolate', '\u2066x', 'U+2066 at character 1'],
    ['a zero-width space', 'a\u200bb', 'U+200B at character 2'],
    ['a zero-width joiner', 'a\u200db', 'U+200D at character 2'],
    ['a byte-order mark', '\ufeffname', 'U+FEFF at character 1'],
    ['a soft hyphen', 'na\u00adme', 'U+00AD at character 3'],
    ['a variation selector', 'a\ufe0f', 'U+FE0F at character 2'],
    ['a Hangul filler', 'a\u3164', 'U+3164 at character 2'],
    ['a line separator', 'a\u2028', 'U+2028 at character 2'],
    ['a no-break space', 'a\u00a0b', 'U+00A0 at character 2'],
    ['a tab', 'a\tb', 'U+0009 at character 2'],
    ['a lone surrogate', 'a\ud800', 'U+D800 at character 2'],
    ['a character after an astral one (counted once)', '😀\u202e', 'U+202E at character 2'],
  ])('describes a name with %s by that character and its position', (_label, name, at) => {
    expect(whyNotShown(name)).toBe(`holding a control or invisible character (${at})`);
  });

  it('describes a longer name by its length in characters, and a character before the length', () => {
    expect(whyNotShown('x'.repeat(MAX_NAME + 1))).toBe(`of ${MAX_NAME + 1} characters, more than the 100 repeated`);
    expect(whyNotShown('😀'.repeat(10_000))).toBe('of 10000 characters, more than the 100 repeated');
    expect(whyNotShown(`${'x'.repeat(5_000)}\u0000`)).toMatch(/U\+0000 at character 5001/);
  });

  it('nameOrWhy repeats or describes, quoted on request', () => {
    expect(nameOrWhy('S-1', 'with an id', true)).toBe('"S-1"');
    expect(nameOrWhy('/api/v1/x', 'a path')).toBe('/api/v1/x');
    expect(nameOrWhy('S\u202e1', 'with an id', true)).toBe(
      'with an id holding a control or invisible character (U+202E at character 2)',
    );
  });

  it('valueOrWhy repeats a value or names it with why in parentheses, never cut', () => {
    expect(valueOrWhy('S-1', 'as sent', true)).toBe('"S-1"');
    expect(valueOrWhy('hooks.example.com', "the URL's host")).toBe('hooks.example.com');
    expect(valueOrWhy('x'.repeat(MAX_NAME), 'a scheme')).toBe('x'.repeat(MAX_NAME));
    expect(valueOrWhy('x'.repeat(MAX_NAME + 1), 'a scheme')).toBe(
      `a scheme (of ${MAX_NAME + 1} characters, more than the ${MAX_NAME} repeated)`,
    );
    expect(valueOrWhy('S\u202e1', 'as sent', true)).toBe(
      'as sent (holding a control or invisible character (U+202E at character 2))',
    );
  });
});

describe('JSON pointers of member names (RFC 6901)', () => {
  it('escape ~ and / and read back as sent', () => {
    for (const name of ['a/b', '~1', 'a~0/~', '', '~'])
      expect(pointerNames(`/${escapePointer(name)}/0`)).toEqual([name, '0']);
    expect(pointerNames('')).toEqual([]);
  });
});

describe('a validation problem files a failure under a name it does not repeat', () => {
  const validate = compileBodyValidator({
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      labels: { type: 'object', maxProperties: 60, additionalProperties: { type: 'string' } },
      rows: { type: 'array', items: { type: 'object', additionalProperties: false, properties: {} } },
    },
  });
  const problemOf = (body: unknown, root = 'body') => {
    expect(validate(body)).toBe(false);
    return validationProblemFromAjv(validate.errors ?? [], root);
  };

  it('repeats printable names, with / and ~ as sent', () => {
    const problem = problemOf({ 'a/b~1': 1, rows: [{ 'x.y': 1 }] });
    expect(problem.errors).toEqual({ 'a/b~1': ['is not a known field'], 'rows[0].x.y': ['is not a known field'] });
  });

  it('an unknown member with U+202E, a NUL or 10,000 characters: under body, described', () => {
    const problem = problemOf({ name: 'ok', 'a\u202eb': 1 });
    expect(problem.errors).toEqual({
      body: [
        'has a member with a name holding a control or invisible character (U+202E at character 2), not repeated here: is not a known field',
      ],
    });
    expect(problem.detail).toBe('The request has an invalid field: body.');
    expect(problemOf({ 'a\u0000b': 1 }).errors?.body).toEqual([
      'has a member with a name holding a control or invisible character (U+0000 at character 2), not repeated here: is not a known field',
      'has a member with a name holding a control or invisible character (U+0000 at character 2), not repeated here: must not contain the NUL character (U+0000)',
    ]);
    expect(problemOf({ ['k'.repeat(10_000)]: 1 }).errors?.body).toEqual([
      'has a member with a name of 10000 characters, more than the 100 repeated, not repeated here: is not a known field',
    ]);
  });

  it('nested: under the field holding the name; a failure deeper within it says so', () => {
    expect(problemOf({ rows: [{ '\u200b': 1 }] }).errors).toEqual({
      'rows[0]': [
        'has a member with a name holding a control or invisible character (U+200B at character 1), not repeated here: is not a known field',
      ],
    });
    expect(problemOf({ labels: { 'x\u2066': 5 } }).errors).toEqual({
      labels: [
        'has a member with a name holding a control or invisible character (U+2066 at character 2), not repeated here: must be a string',
      ],
    });
  });

  it('a query parameter: under querystring, called a parameter', () => {
    expect(problemOf({ ['p'.repeat(101)]: 1 }, 'querystring').errors).toEqual({
      querystring: [
        'has a parameter with a name of 101 characters, more than the 100 repeated, not repeated here: is not a known field',
      ],
    });
  });

  it('many such names: the first described, the others counted, the problem bounded', () => {
    const body = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`${'\u202e'.repeat(index + 1)}x`, 1]));
    const problem = problemOf({ ...body, name: 1, 'a/b': 1 });
    expect(Object.keys(problem.errors ?? {}).sort()).toEqual(['a/b', 'body', 'name']);
    expect(problem.errors?.body).toEqual([
      expect.stringMatching(/^has a member with a name holding .*U\+202E at character 1.*: is not a known field$/),
      'has 39 more members whose names are not repeated here either',
    ]);
    // The 39 are counted as fields not named, beside the three named.
    expect(problem.extensions).toEqual({ errorsOmitted: 39 });
    expect(problem.detail).toBe(
      'The request has 42 invalid fields: body, a/b, name and 39 more; errors names the first 3.',
    );
    expect(JSON.stringify(problem.errors).length).toBeLessThan(1_000);
  });

  it('validationProblem never repeats a withheld name a caller passes, whatever it is', () => {
    const problem = validationProblem({ ['\u202e'.repeat(5_000)]: ['is wrong'], ok: ['is wrong too'] });
    expect(problem.errors).toEqual({
      request: [
        'has a field with a name holding a control or invisible character (U+202E at character 1), not repeated here: is wrong',
      ],
      ok: ['is wrong too'],
    });
    expect(Object.keys(validationProblem({ ['n'.repeat(200)]: ['x'] }).errors ?? {})).toEqual(['request']);
    expect(MAX_FIELD_ERRORS).toBe(50);
  });
});
