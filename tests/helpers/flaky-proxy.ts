/**
 * An HTTP proxy in front of the test app that passes requests and WebSocket upgrades on, except those a test
 * makes fail the way a service restarting or a network failing does: answered with a status of its choosing
 * (503, 429 with Retry-After, …) or cut (the connection reset, no answer). `cutStreams` ends the upgraded
 * connections that are open (a dropped stream). What the proxy saw is in `requests`, in order. An answer the
 * proxy makes up carries PROXY_FAILURE_HEADER, so a client's contract check can tell it from the service's.
 */
import { createServer, type IncomingMessage, request as httpRequest } from 'node:http';
import net from 'node:net';

/** Marks the answers the proxy makes up (failures), which are not the service's. */
export const PROXY_FAILURE_HEADER = 'x-flaky-proxy-failure';

export type Failure = { status: number; headers?: Record<string, string> } | 'reset';

export interface ProxiedCall {
  method: string;
  path: string;
  upgrade: boolean;
  /** The failure the proxy made of it, if any. */
  failure?: Failure;
}

export interface FlakyProxy {
  baseUrl: string;
  requests: ProxiedCall[];
  /** Decides each request's fate; undefined passes it on. */
  fail: (call: ProxiedCall) => Failure | undefined;
  /** Ends every upgraded connection open now. */
  cutStreams(): void;
  close(): Promise<void>;
}

function failureHead(failure: Exclude<Failure, 'reset'>): string {
  const headers = {
    'content-type': 'application/problem+json',
    connection: 'close',
    [PROXY_FAILURE_HEADER]: '1',
    ...failure.headers,
  };
  const body = JSON.stringify({ type: 'about:blank', title: 'Proxied failure', status: failure.status, detail: '' });
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) });
  return `HTTP/1.1 ${failure.status} Failure\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
}

export async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const upstream = new URL(target);
  const streams = new Set<net.Socket>();
  const record = (request: IncomingMessage, upgrade: boolean): ProxiedCall => {
    const call: ProxiedCall = { method: request.method!, path: request.url!, upgrade };
    const failure = proxy.fail(call);
    if (failure) call.failure = failure;
    proxy.requests.push(call);
    return call;
  };
  const server = createServer((request, response) => {
    const { failure } = record(request, false);
    if (failure === 'reset') return void request.socket.destroy();
    if (failure) return void request.socket.end(failureHead(failure));
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => request.socket.destroy());
    request.pipe(forwarded);
  });
  server.on('upgrade', (request: IncomingMessage, socket: net.Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const { failure } = record(request, true);
    if (failure === 'reset') return void socket.destroy();
    if (failure) return void socket.end(failureHead(failure));
    const service = net.connect(Number(upstream.port), upstream.hostname, () => {
      const lines = [];
      for (let i = 0; i < request.rawHeaders.length; i += 2)
        lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}\r\n`);
      service.write(`${request.method} ${request.url} HTTP/1.1\r\n${lines.join('')}\r\n`);
      service.write(head);
      socket.pipe(service).pipe(socket);
    });
    streams.add(socket);
    service.on('error', () => socket.destroy());
    socket.on('close', () => {
      streams.delete(socket);
      service.destroy();
    });
    service.on('close', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: FlakyProxy = {
    baseUrl: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    requests: [],
    fail: () => undefined,
    cutStreams: () => {
      for (const socket of streams) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of streams) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
