/**
 * One process at a time on an embedded database. PGlite has no lock that another process sees: a second
 * process opening a DATA_DIR/pgdata that is in use runs crash recovery on the live files and serves beside
 * the first, two writers on one database; the checkpoint it writes when it stops leaves every later opening
 * unable to find its own ("PANIC: could not locate a valid checkpoint record", then PGlite's bare "Aborted()")
 * until the first one stops too.
 *
 * So the process that opens it first listens on a Unix socket in DATA_DIR (`pgdata.lock`), which the
 * operating system closes when that process ends, however it ends. A second process finds the socket
 * answering and is refused before it touches the database. A socket file left by a process that was killed
 * answers nothing and is replaced. Where DATA_DIR's path is longer than a socket address holds, Linux takes a
 * socket in its abstract namespace instead, named by a hash of the directory's real path (no file: it goes with
 * its process); where no socket can be made at all (such a path elsewhere, a file system without sockets), the
 * database is opened without the lock, as it was before.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const LOCK_FILE = 'pgdata.lock';

/** The longest socket path every platform takes whole (sockaddr_un: 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH_BYTES = 103;

/** A second process on a DATA_DIR whose embedded database another one has open. */
export class DataDirectoryInUseError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `the embedded database in ${path.join(dataDir, 'pgdata')} is open in another process (a site-services ` +
        `or \`npm run migrate\` on the same DATA_DIR): it serves one process only, and a second one would ` +
        `damage it. Stop the other process first, or give this one a DATA_DIR of its own (or DATABASE_URL).`,
    );
    this.name = 'DataDirectoryInUseError';
  }
}

export interface DataDirectoryLock {
  release(): Promise<void>;
}

const NO_LOCK: DataDirectoryLock = { release: async () => undefined };

function listenOn(file: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    // A connection is only a question ("is anyone here?"): answered by closing it.
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(file, () => {
      server.off('error', reject);
      server.unref();
      resolve(server);
    });
  });
}

function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function held(server: net.Server): DataDirectoryLock {
  return { release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * The lock of a DATA_DIR whose socket file's path is too long, in Linux's abstract namespace (a name starting
 * with a NUL byte): the kernel frees it when its process ends, so a name in use is a process holding it.
 */
async function lockByAbstractName(dataDir: string): Promise<DataDirectoryLock> {
  if (process.platform !== 'linux') return NO_LOCK;
  const digest = createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 40);
  try {
    return held(await listenOn(`\0site-services-pgdata-${digest}`));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new DataDirectoryInUseError(dataDir);
    return NO_LOCK;
  }
}

/** Takes DATA_DIR's lock, or throws DataDirectoryInUseError while another process holds it. */
export async function lockDataDirectory(dataDir: string): Promise<DataDirectoryLock> {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH_BYTES) return lockByAbstractName(dataDir);
  for (let attempt = 0; ; attempt++) {
    try {
      return held(await listenOn(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') return NO_LOCK;
      // Taken again after the stale file was removed: another process started at the same moment.
      if (attempt > 0 || (await answers(file))) throw new DataDirectoryInUseError(dataDir);
      fs.rmSync(file, { force: true });
    }
  }
}
