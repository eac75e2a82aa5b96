/**
 * Where `svc listen` remembers an open listener (its id, stream and signing secret), so that a command
 * killed and started again with the same credentials and options resumes it. The file lives in a directory
 * of the user's own (XDG_STATE_HOME/svc, else ~/.local/state/svc, mode 0700): a predictable name in the
 * shared temporary directory could be planted by another user (a listener of theirs, resumed with our token
 * and secret) or be a link to a file of ours that the write would overwrite.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** The state file of one listener: one per service, client and forwarding options. */
export class ListenerState {
  readonly file: string;

  constructor(
    identity: readonly unknown[],
    private readonly directory = stateDirectory(),
  ) {
    const hash = createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
    this.file = path.join(directory, `listen-${hash}.json`);
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

  save(listener: RememberedListener): void {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    writeFileSync(this.file, JSON.stringify(listener), { mode: 0o600 });
  }

  forget(): void {
    rmSync(this.file, { force: true });
  }
}
