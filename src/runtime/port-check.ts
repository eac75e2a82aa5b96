/**
 * Whether the ports a start will listen on are free, asked before the start opens its database: a first
 * start would otherwise provision the sandbox, print its credentials and write them to DATA_DIR, and only
 * then fail to listen (a developer whose port 3000 runs something else saw credentials, then an error).
 * The probe binds and releases each port; the real listen a moment later can still lose a race, and is
 * reported the same way (see `startupFailure` in server.ts).
 */
import net from 'node:net';
import type { Config } from '../config.js';

/** A port the start cannot listen on, said with the variable that picks another one. */
export class PortUnavailable extends Error {
  constructor(variable: 'PORT' | 'METRICS_PORT', port: number, host: string, code: string | undefined) {
    const another = `${variable}=${port < 65535 ? port + 1 : 1024} npm start`;
    super(
      code === 'EADDRINUSE'
        ? `port ${port} of ${host} is in use by another process (a site-services already running?): stop it, ` +
            `or start this one with ${variable} set to a free port, e.g. ${another}`
        : `this user may not listen on port ${port} of ${host} (ports below 1024 need privileges): set ` +
            `${variable} to a port from 1024, e.g. ${another}, behind a proxy that serves the public port`,
    );
    this.name = 'PortUnavailable';
  }
}

/** Rejects with the listen error `port` on `host` gives now; port 0 (any free port) is always free. */
function probe(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Throws PortUnavailable for the first of PORT (when this process serves the API) and METRICS_PORT that
 * is taken or forbidden; any other listen error (an address not of this machine) as it is.
 */
export async function ensurePortsFree(config: Pick<Config, 'role' | 'port' | 'metricsPort' | 'host'>): Promise<void> {
  const ports: ['PORT' | 'METRICS_PORT', number][] = [];
  if (config.role !== 'worker') ports.push(['PORT', config.port]);
  if (config.metricsPort !== undefined) ports.push(['METRICS_PORT', config.metricsPort]);
  for (const [variable, port] of ports) {
    try {
      await probe(port, config.host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') throw new PortUnavailable(variable, port, config.host, code);
      throw error;
    }
  }
}
