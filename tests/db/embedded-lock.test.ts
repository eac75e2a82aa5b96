/**
 * DATA_DIR's lock (src/db/embedded-lock.ts) taken twice: the second is refused while the first holds it, and
 * taken once it is released; for a path a socket file can hold, and for one too long for it (Linux's abstract
 * namespace; elsewhere such a directory is not locked).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirectoryInUseError, lockDataDirectory } from '../../src/db/embedded-lock.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lock-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe.each([
  ['a short path', path.join(root, 'short')],
  ['a path longer than a socket address holds', path.join(root, 'long-'.repeat(20))],
])('DATA_DIR with %s', (_, dataDir) => {
  it.runIf(process.platform === 'linux')('one holder at a time, and the next once it is released', async () => {
    const first = await lockDataDirectory(dataDir);
    await expect(lockDataDirectory(dataDir)).rejects.toBeInstanceOf(DataDirectoryInUseError);
    await first.release();
    const again = await lockDataDirectory(dataDir);
    await again.release();
  });
});
