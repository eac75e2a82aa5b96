/**
 * `npm run docs:config`: writes the README's configuration table from the declarations in src/config.ts
 * (src/config/table.ts). With `--check` it writes nothing and fails when the table is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigTable } from './config/table.js';

const file = 'README.md';
const readme = readFileSync(file, 'utf8');
const current = withConfigTable(readme);
if (process.argv.includes('--check')) {
  if (current !== readme) {
    process.stderr.write(`${file}: the configuration table is stale; run npm run docs:config\n`);
    process.exit(1);
  }
} else if (current !== readme) {
  writeFileSync(file, current);
  process.stdout.write(`${file}: configuration table written\n`);
}
