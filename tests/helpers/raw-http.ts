/**
 * Requests whose target is sent byte for byte: fetch (a WHATWG URL) resolves dot segments and cannot send
 * the absolute form, so the spellings of a path that a hostile client uses go through node:http with the
 * target as its `path`, which Node writes into the request line as it is.
 */
import http from 'node:http';
import net from 'node:net';
import type { TestResponse } from './http.js';

export interface RawRequest {
  method: string;
  /** The request target exactly as sent: `/%61pi/v1/sites`, `http://any/api/v1/sites`, `//api/v1/…`. */
  target: string;
  headers?: Record<string, string>;
  body?: string;
}

export function rawRequest(baseUrl: string, request: RawRequest): Promise<TestResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: hostname,
        port: Number(port),
        method: request.method,
        path: request.target,
        headers: {
          ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
          ...request.headers,
        },
        agent: false,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            for (const item of [value ?? []].flat()) headers.append(name, item);
          }
          const contentType = headers.get('content-type') ?? '';
          resolve({
            status: incoming.statusCode ?? 0,
            headers,
            body: /json/.test(contentType) && text.length > 0 ? JSON.parse(text) : text,
            text,
            contentType,
          });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** The answer to a request written on a socket byte for byte: its status, its head lower-cased, its JSON body. */
export interface SocketAnswer {
  status: number;
  headers: string;
  body: any;
}

/**
 * Writes `text` on a connection of its own, for what neither fetch nor node:http will send (bytes that are not
 * HTTP, a header line twice, a transfer coding). Resolves when the service closes the connection, or once the
 * whole answer (by its Content-Length) is in when it keeps the connection open.
 */
export function socketRequest(baseUrl: string, text: string): Promise<SocketAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(text));
    let received = '';
    const parts = () => received.split('\r\n\r\n');
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      received += chunk;
      const [head = '', body = ''] = parts();
      const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
      if (length !== undefined && Buffer.byteLength(body) >= Number(length)) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = parts();
      resolve({
        status: Number(head.split(' ')[1]),
        headers: head.toLowerCase(),
        body: body ? JSON.parse(body) : undefined,
      });
    });
  });
}

/**
 * Spellings of requests under /api/v1 that the router reaches (or refuses) like their plain form; each
 * must be counted and, once the address's budget is spent, refused. `token` marks the token endpoint.
 */
export interface Spelling extends RawRequest {
  name: string;
  token?: boolean;
}

export function pathSpellings(credentials: { clientId: string; clientSecret: string }): Spelling[] {
  const tokenBody = JSON.stringify({
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
  });
  const tokenRequest = (name: string, target: string): Spelling => ({
    name,
    method: 'POST',
    target,
    headers: { 'content-type': 'application/json' },
    body: tokenBody,
    token: true,
  });
  const get = (name: string, target: string): Spelling => ({ name, method: 'GET', target });
  return [
    get('plain', '/api/v1/sites'),
    get('percent-encoded letter', '/%61pi/v1/sites'),
    get('every letter percent-encoded', '/%61%70%69/%76%31/%73%69%74%65%73'),
    get('absolute form', 'http://any/api/v1/sites'),
    get('absolute form, upper-case scheme, port, encoded', 'HTTP://ANY:1/%61pi/v1/sites'),
    get('doubled leading slash', '//api/v1/sites'),
    get('doubled inner slashes', '/api//v1//sites'),
    get('dot segment', '/api/v1/./sites'),
    get('dot-dot segment', '/x/../api/v1/sites'),
    get('encoded dot-dot segment', '/x/%2e%2e/api/v1/sites'),
    get('trailing slash', '/api/v1/sites/'),
    get('upper case', '/API/V1/SITES'),
    get('encoded slashes', '/api%2Fv1%2Fsites'),
    get('backslashes', '/api\\v1\\sites'),
    get('query string', '/%61pi/v1/sites?page%5Bsize%5D=1'),
    get('fragment', '/%61pi/v1/sites#x'),
    get('semicolon parameter', '/api/v1/sites;x=1'),
    get('unknown path', '/%61pi/v1/no-such-thing'),
    get('unknown path, absolute form', 'http://any/api/v1/no-such-thing'),
    get('malformed percent-encoding', '/%61pi/v1/sites/%zz'),
    get('path parameter beyond its length', `/%61pi/v1/sites/${'a'.repeat(300)}`),
    get('the OpenAPI document', '/%61pi/v1/openapi.json'),
    { name: 'HEAD, encoded', method: 'HEAD', target: '/%61pi/v1/sites' },
    { name: 'method not allowed, encoded', method: 'PUT', target: '/%61pi/v1/sites' },
    tokenRequest('token endpoint', '/api/v1/oauth/token'),
    tokenRequest('token endpoint, encoded', '/%61pi/v1/oauth/token'),
    tokenRequest('token endpoint, absolute form', 'http://any/api/v1/oauth/token'),
    // The router matches no route here (404): counted by its normalised path, no secret is ever checked.
    { ...tokenRequest('token endpoint, dot segments', '/api/v1/oauth/./x/../token'), token: false },
  ];
}
