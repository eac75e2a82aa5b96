/**
 * A loopback canary: TCP listeners on 127.0.0.1 and [::1] (port 443 by default, where a hostile
 * destination without a port would connect) that count every connection and answer nothing. Any count
 * above zero means a request the service should have refused reached this machine.
 */
import net from 'node:net';

export interface Canary {
  readonly port: number;
  hits(): number;
  close(): Promise<void>;
}

export async function startCanary(port = 443): Promise<Canary> {
  let hits = 0;
  const servers: net.Server[] = [];
  for (const host of ['127.0.0.1', '::1']) {
    const server = net.createServer((socket) => {
      hits++;
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    servers.push(server);
  }
  // Proves the canary counts before trusting its zero: one connection to each listener, then reset.
  for (const host of ['127.0.0.1', '::1']) {
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(port, host, () => socket.end());
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
  }
  const deadline = Date.now() + 5_000;
  while (hits < 2) {
    if (Date.now() > deadline) throw new Error('the canary did not count its own test connections');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  hits = 0;
  return {
    port,
    hits: () => hits,
    close: () =>
      Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(
        () => undefined,
      ),
  };
}
