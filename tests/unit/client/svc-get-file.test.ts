/**
 * `svc get` of a file download (a return label, a message's attachment): its bytes reach stdout as they came,
 * so `svc get … > photo.png` keeps the file. They were decoded as text and printed with a newline: a 70-byte
 * PNG came out as 91 bytes, broken. JSON answers are printed as before. No service: a fetch stands in.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../../packages/client/src/client.js';
import { getCommand } from '../../../packages/client/src/cli/get.js';
import { main } from '../../../packages/client/src/cli/main.js';

// A PNG's first bytes: 0x89 and the CR LF SUB LF that no UTF-8 decoding keeps as they are.
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe]);
const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_CLIENT_ID: 'cli_x', SVC_CLIENT_SECRET: 'secret_x' };

async function fakeFetch(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (pathname === '/api/v1/oauth/token')
    return Response.json({ access_token: 'token', token_type: 'Bearer', expires_in: 3600, scope: 'sites:read' });
  if (pathname.endsWith('/file-attachment'))
    return new Response(PNG, { headers: { 'content-type': 'image/png', 'content-length': String(PNG.length) } });
  return Response.json({ data: [], meta: { pageSize: 25 } });
}

function capture() {
  const chunks: Buffer[] = [];
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    chunks.push(Buffer.from(chunk as Uint8Array | string));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  return { stdout: () => Buffer.concat(chunks), stderr: () => stderr };
}

afterEach(() => vi.restoreAllMocks());

describe('svc get of a file', () => {
  it('writes its bytes unchanged, with nothing added', async () => {
    const out = capture();
    const code = await main(['get', 'messages/msg_1/file-attachment'], env, { fetch: fakeFetch });
    expect(code, out.stderr()).toBe(0);
    expect(out.stdout().equals(Buffer.from(PNG))).toBe(true);
  });

  it('prints JSON as before', async () => {
    const out = capture();
    expect(await main(['get', 'sites'], env, { fetch: fakeFetch })).toBe(0);
    expect(JSON.parse(out.stdout().toString())).toEqual({ data: [], meta: { pageSize: 25 } });
  });

  it('onto a terminal, says what came and how to save it instead of printing the bytes', async () => {
    const out = capture();
    const client = () =>
      createClient({ baseUrl: env.SVC_BASE_URL, clientId: 'cli_x', clientSecret: 's', fetch: fakeFetch });
    const written: unknown[] = [];
    const terminal = { isTTY: true, write: (chunk: unknown) => written.push(chunk) } as unknown as NodeJS.WriteStream;
    expect(await getCommand(['messages/msg_1/file-attachment'], client, 'usage', terminal)).toBe(0);
    expect(written).toEqual([]);
    expect(out.stderr()).toContain(
      "the answer is a file (image/png, 11 bytes); save it: svc get 'messages/msg_1/file-attachment' > file",
    );
  });
});
