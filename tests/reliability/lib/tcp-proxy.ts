/**
 * A TCP proxy on 127.0.0.1 in front of a server (the webhook receiver, PostgreSQL), through which a suite
 * makes the server disappear without touching it: `refuse` stops listening and drops every connection
 * (what a stopped server or a restarting database looks like: connection refused), `blackhole` accepts
 * and never answers (a hung server: timeouts), `stall` does the same without dropping the open connections,
 * which stop carrying bytes in either direction (a frozen database: what was sent is never answered),
 * `forward` brings it back on the same port (dropping whatever connection was open).
 */
import net from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole' | 'stall';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** Open client → upstream pairs, to stall them. */
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private modeNow: ProxyMode = 'forward';
  /** Connections accepted over the proxy's life. */
  accepted = 0;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host?: string; port: number }): Promise<TcpProxy> {
    const probe = net.createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    const proxy = new TcpProxy(port, { host: target.host ?? '127.0.0.1', port: target.port });
    await proxy.listen();
    return proxy;
  }

  get mode(): ProxyMode {
    return this.modeNow;
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => {
      this.accepted++;
      this.track(client);
      if (this.modeNow === 'blackhole' || this.modeNow === 'stall') return;
      const upstream = net.connect(this.target.port, this.target.host);
      this.track(upstream);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => {
        client.destroy();
        this.pairs.delete(pair);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  private async unlisten(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Drops every open connection (both sides). */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async setMode(mode: ProxyMode): Promise<void> {
    this.modeNow = mode;
    if (mode === 'stall') {
      for (const [client, upstream] of this.pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      if (!this.server) await this.listen();
      return;
    }
    this.cut();
    if (mode === 'refuse') await this.unlisten();
    else if (!this.server) await this.listen();
  }

  async close(): Promise<void> {
    this.cut();
    await this.unlisten();
  }
}
