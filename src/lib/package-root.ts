/**
 * The service's own directory (the one holding its package.json), found by walking up from this module:
 * the same answer from the sources (src/lib/), from the build (dist/, bundled into a chunk whose depth
 * says nothing), and from tests. Files the service reads at run time (the console, the database
 * template) are named from here, never by counting `../` from a module's own place.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = 'site-services';

function findRoot(start: string): string {
  for (let directory = start; ; directory = path.dirname(directory)) {
    const file = path.join(directory, 'package.json');
    if (fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === NAME)
      return directory;
    if (path.dirname(directory) === directory) throw new Error(`no ${NAME} package.json above ${start}`);
  }
}

export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
