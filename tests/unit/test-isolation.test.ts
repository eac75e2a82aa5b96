/**
 * The test files share their worker's modules (vitest.config.ts): a file that replaces a module or a global
 * for itself would replace it for the files after it in the same worker. Such a file is named
 * `*.isolated.test.ts`, which runs it with modules of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const TESTS = path.resolve(import.meta.dirname, '..');
/** What changes a module or a global for the rest of the worker's files. */
const REPLACES_SHARED = /\bvi\.(mock|doMock|stubGlobal|stubEnv)\(/;

describe('test files that replace a module or a global', () => {
  it('are named *.isolated.test.ts', () => {
    const files = readdirSync(TESTS, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThan(100);
    const shared = files.filter(
      (file) =>
        !file.endsWith('.isolated.test.ts') && REPLACES_SHARED.test(readFileSync(path.join(TESTS, file), 'utf8')),
    );
    expect(shared).toEqual([]);
  });
});
