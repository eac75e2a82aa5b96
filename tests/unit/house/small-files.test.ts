/**
 * The house rule "small files" (docs/architecture.md), executed: a file of the product's code (the service,
 * the client package, the console, the examples) holds at most 300 lines, so that a file is one thing a
 * reader takes in whole. The few longer ones are listed below, each with why it stays whole; a new long file
 * fails here until it is split along its seams or joins the list, and an entry whose file is short again (or
 * gone) fails too. Tests and the bench are not held to it: a test file gathers the cases of one behaviour.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const MAX_LINES = 300;
const PRODUCT_CODE = ['src', 'packages/client/src', 'packages/client/scripts', 'console', 'examples'];
const CODE_FILE = /\.(ts|js|mjs|cjs)$/;

/** `file (from the root) → why it stays whole although longer`. */
const LONG_ON_PURPOSE: Record<string, string> = {
  'src/config.ts': 'the declarations of every setting, one entry each: the schema, its errors and the README table',
  'src/db/schema.ts': "the database's tables as Kysely types, one interface per table, as the migrations leave them",
  'src/modules/docs/definitions.ts': "the documents' prose (info, tags, the guides' texts), one entry per text",
  'packages/client/src/generated/api.ts': 'generated from the OpenAPI document by npm run client:types',
};

function codeFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const file = path.join(directory, name);
    if (statSync(file).isDirectory()) return codeFiles(file);
    return CODE_FILE.test(name) && !name.endsWith('.d.ts') ? [file] : [];
  });
}

function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const files = PRODUCT_CODE.flatMap((directory) => codeFiles(path.join(ROOT, directory))).map((file) => ({
  file: path.relative(ROOT, file),
  lines: lineCount(file),
}));

describe('house rule: small files', () => {
  it(`no file of the product's code holds more than ${MAX_LINES} lines, but those listed with their reason`, () => {
    const long = files.filter(({ file, lines }) => lines > MAX_LINES && !(file in LONG_ON_PURPOSE));
    expect(long.map(({ file, lines }) => `${file}: ${lines} lines`)).toEqual([]);
  });

  it('every listed file is still long (an entry whose file was split or removed goes)', () => {
    const stillLong = new Set(files.filter(({ lines }) => lines > MAX_LINES).map(({ file }) => file));
    expect(Object.keys(LONG_ON_PURPOSE).filter((file) => !stillLong.has(file))).toEqual([]);
  });
});
