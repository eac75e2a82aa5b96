#!/usr/bin/env node
// The `svc` command. This file is not built: npm links a package's bin when it installs it, and in this
// repository's workspace that happens before the root's prepare script has built dist/, so the bin must
// already exist then. It only loads the built command.
//
// In the service's checkout (src/ beside dist/; an installed package ships no src/), it first says when the
// build is older than a source: `npm start` rebuilds the service, not this client, so after a pull `npx svc`
// would silently run the client of the last install. It says so rather than rebuilding: two svc commands
// started together would each replace dist/ under the other.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** The newest modification time of a file under `directory`. */
function newest(directory) {
  let latest = 0;
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs);
  }
  return latest;
}

const sources = path.join(root, 'src');
const built = fs.statSync(path.join(root, 'dist', 'cli', 'bin.js'), { throwIfNoEntry: false });
if (built && fs.existsSync(sources) && newest(sources) > built.mtimeMs) {
  process.stderr.write(
    'svc: this build is older than its sources (a pull since the last install?); running it anyway. ' +
      'Build them with `npm run build --workspace packages/client` in the checkout.\n',
  );
}
await import('../dist/cli/bin.js');
