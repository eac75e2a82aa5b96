/**
 * What a start is doing, said as it happens, so that a first start (template copy, migrations, the demo
 * tenant) is not seconds of silence and a restart says where the sandbox's credentials are. In the sandbox
 * (a developer's terminal) these are plain lines on stderr; in production they are log entries like any
 * other, for the log pipeline.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { keptCredentialPacket } from './sandbox.js';

export type Progress = (line: string) => void;

export function startupProgress(config: Pick<Config, 'environment'>, logger: Logger): Progress {
  if (config.environment === 'production') return (line) => logger.info({ startup: true }, line);
  return (line) => process.stderr.write(`site-services: ${line}\n`);
}

/** Seconds since the process started, for the closing line. */
export function sinceProcessStart(): string {
  return `${(performance.now() / 1000).toFixed(1)} s`;
}

/** A restart in the sandbox: where the files that the first start wrote and printed are. */
export function reportKeptFiles(dataDir: string, baseUrl: string, progress: Progress): void {
  const kept = keptCredentialPacket(dataDir, baseUrl);
  if (!kept) return;
  const moved = kept.movedFrom ? ` (its baseUrl is now ${baseUrl}, was ${kept.movedFrom})` : '';
  progress(`client credentials are in ${kept.file}${moved}`);
}
