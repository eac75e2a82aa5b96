/**
 * Where `svc listen` remembers an open listener (its id, stream and signing secret), so that a command
 * killed and started again with the same credentials and options resumes it, and the signing secret it
 * keeps per client id, which it gives every new listener: the developer's receiver is configured once,
 * whatever stops the command and whichever address the service is reached at. The files live in a directory
 * of the user's own (XDG_STATE_HOME/svc, else ~/.local/state/svc, mode 0700): a predictable name in the
 * shared temporary directory could be planted by another user (a listener of theirs, resumed with our token
 * and secret) or be a link to a file of ours that the write would overwrite.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface RememberedListener {
  id: string;
  secret: string;
  streamPath: string;
  graceSeconds: number;
}

type Env = Record<string, string | undefined>;

/** The user's own directory for svc's state. */
export function stateDirectory(env: Env = process.env): string {
  // XDG: a relative XDG_STATE_HOME is invalid and ignored.
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  return path.join(base ?? path.join(os.homedir(), '.local', 'state'), 'svc');
}

/**
 * Writes a state file 0600 and atomically, in the directory (made 0700 if missing): a temporary file beside
 * it, renamed over it, so a run stopped mid-write leaves the old content or the new, never a part.
 */
function writeAtomically(directory: string, file: string, content: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function fileName(prefix: string, identity: readonly unknown[]): string {
  return `${prefix}-${createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16)}`;
}

/** The state file of one listener: one per service, client and forwarding options. */
export class ListenerState {
  readonly file: string;

  constructor(
    identity: readonly unknown[],
    private readonly directory = stateDirectory(),
  ) {
    this.file = path.join(directory, `${fileName('listen', identity)}.json`);
  }

  /** The listener remembered, if the file holds one. */
  read(): RememberedListener | undefined {
    try {
      const saved = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<RememberedListener>;
      if (typeof saved.id === 'string' && typeof saved.secret === 'string' && typeof saved.streamPath === 'string')
        return { graceSeconds: 60, ...saved } as RememberedListener;
    } catch {
      // none, or unreadable: a new listener
    }
    return undefined;
  }

  /** Written 0600 and atomically (writeAtomically): an interrupted save never leaves a partial file. */
  save(listener: RememberedListener): void {
    writeAtomically(this.directory, this.file, JSON.stringify(listener));
  }

  forget(): void {
    rmSync(this.file, { force: true });
  }
}

/** The service's bounds of a listener's secret, in Unicode code points. */
const SECRET_MIN = 16;
const SECRET_MAX = 512;

/**
 * The signing secret `svc listen` keeps for one client id: made here on first use ('whsec_' and 32 random bytes,
 * base64url), sent with every new listener, replaced only on demand (--new-secret). Written 0600 and atomically
 * (a temporary file renamed over it): a run stopped mid-write leaves the old secret or the new one, never a part.
 *
 * Not per service address: a client id is made by one service for one tenant, so the same id at another address
 * is the same sandbox (restarted with PORT changed, as the README's port-taken case does, or named localhost
 * rather than 127.0.0.1), and a secret per address gave the developer's receiver, configured once, a new secret
 * it rejected every delivery with. A secret kept by an earlier svc for this address and client id is adopted.
 */
export class SigningSecret {
  readonly file: string;
  private readonly earlierFile: string;

  constructor(
    identity: { clientId: string; baseUrl: string },
    private readonly directory = stateDirectory(),
  ) {
    this.file = path.join(directory, fileName('signing-secret', [identity.clientId]));
    this.earlierFile = path.join(directory, fileName('signing-secret', [identity.baseUrl, identity.clientId]));
  }

  /** The secret kept, if the file (or an earlier svc's for this address) holds one the service would accept. */
  read(): string | undefined {
    const kept = readSecret(this.file);
    if (kept !== undefined) return kept;
    const earlier = readSecret(this.earlierFile);
    if (earlier !== undefined) writeAtomically(this.directory, this.file, `${earlier}\n`);
    return earlier;
  }

  /** The secret kept, made and kept now if there is none. */
  get(): string {
    return this.read() ?? this.renew();
  }

  /** A new secret, kept in place of the old one. */
  renew(): string {
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    writeAtomically(this.directory, this.file, `${secret}\n`);
    return secret;
  }
}

/** A secret file's secret, if it holds one the service would accept. */
function readSecret(file: string): string | undefined {
  try {
    const secret = readFileSync(file, 'utf8').trim();
    const length = [...secret].length;
    if (length >= SECRET_MIN && length <= SECRET_MAX) return secret;
  } catch {
    // none yet, or unreadable: a new one
  }
  return undefined;
}
