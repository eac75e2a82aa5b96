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

/** Hosts that listen on every interface. */
const WILDCARD_HOSTS = ['0.0.0.0', '::', ''];

/** The address a developer can open for `port` of `host` (a wildcard host is reached on the loopback). */
export function listeningAddress(host: string, port: number): string {
  const reachable = WILDCARD_HOSTS.includes(host) ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * The line that says where the service answers, once per start: a single process's, or a cluster primary's when
 * its first child listens (the children say nothing: the port is theirs together). A wildcard HOST answers on
 * every interface, which the address shown (the loopback) does not say alone.
 */
export function listeningLine(host: string, port: number): string {
  const address = listeningAddress(host, port);
  const where = WILDCARD_HOSTS.includes(host)
    ? `${address} and every other interface (HOST=${host || '""'}; `
    : `${address} (`;
  return `listening on ${where}ready ${sinceProcessStart()} after start)`;
}

/** A restart in the sandbox: where the files that the first start wrote and printed are. */
export function reportKeptFiles(dataDir: string, baseUrl: string, progress: Progress): void {
  const kept = keptCredentialPacket(dataDir, baseUrl);
  if (!kept) return;
  const moved = kept.movedFrom ? ` (its baseUrl is now ${baseUrl}, was ${kept.movedFrom})` : '';
  progress(`client credentials are in ${kept.file}${moved}`);
}

/**
 * What a start serves besides the API, said once it is known: where METRICS_PORT answers (with a worker's
 * health probes), and, in production without ADMIN_TOKEN, that the operator API is off. Off answers 404 (it hides that it exists), so an operator
 * who forgot the token met 404 at /console, /admin/v1 and /metrics with nothing in the log saying why.
 */
export function reportOperatorSurfaces(
  config: Pick<Config, 'environment' | 'role' | 'adminToken' | 'metricsPort' | 'host'>,
  progress: Progress,
  logger: Logger,
): void {
  if (config.metricsPort !== undefined) {
    const address = listeningAddress(config.host, config.metricsPort);
    // A worker has no API port: its health probes answer here (worker-probes.ts).
    const probes = config.role === 'worker' ? `, /health and /ready on ${address}` : '';
    progress(`metrics on ${address}/metrics${probes} (no token: keep METRICS_PORT off the public network)`);
  }
  if (config.environment === 'production' && config.role !== 'worker' && config.adminToken === undefined)
    logger.warn(
      { startup: true },
      'the operator API is off: ADMIN_TOKEN is unset, so /admin/v1, the console (/console) and /metrics on PORT ' +
        'answer 404; set ADMIN_TOKEN (openssl rand -base64 32) on every API process to turn them on',
    );
}
