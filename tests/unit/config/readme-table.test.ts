/** The README's configuration table is the one src/config.ts declares: `npm run docs:config` rewrites it. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { variables } from '../../../src/config.js';
import { configTable, withConfigTable } from '../../../src/config/table.js';

describe("README's configuration table", () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

  it('is current (run npm run docs:config when this fails)', () => {
    expect(withConfigTable(readme)).toBe(readme);
  });

  it('has a row for every declared variable, with what it accepts', () => {
    const table = configTable();
    for (const [name, variable] of Object.entries(variables)) {
      expect(table).toContain(`| \`${name}\` |`);
      expect(table).toContain(variable.accepts);
    }
  });
});
