/**
 * Where `svc` finds its credentials: the environment, never the command line (argv lands in shell
 * history and process lists). Either SVC_BASE_URL + SVC_CLIENT_ID + SVC_CLIENT_SECRET, or
 * SVC_CREDENTIALS_FILE naming a credential packet (the sandbox's credentials.json: baseUrl, client_id,
 * client_secret); variables set beside the file override its members. SVC_SCOPE optionally narrows the
 * token's scopes.
 */
import { readFileSync } from 'node:fs';
import { checkedBaseUrl } from '../urls.js';

export interface CliCredentials {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
}

export class UsageError extends Error {}

type Env = Record<string, string | undefined>;

export function credentialsFromEnv(env: Env): CliCredentials {
  let packet: { baseUrl?: unknown; client_id?: unknown; client_secret?: unknown } = {};
  const file = env.SVC_CREDENTIALS_FILE;
  if (file) {
    try {
      packet = JSON.parse(readFileSync(file, 'utf8')) as typeof packet;
    } catch (error) {
      throw new UsageError(`SVC_CREDENTIALS_FILE ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const baseUrl = text(env.SVC_BASE_URL) ?? text(packet.baseUrl);
  const clientId = text(env.SVC_CLIENT_ID) ?? text(packet.client_id);
  const clientSecret = text(env.SVC_CLIENT_SECRET) ?? text(packet.client_secret);
  const missing = [
    ...(baseUrl ? [] : ['SVC_BASE_URL']),
    ...(clientId ? [] : ['SVC_CLIENT_ID']),
    ...(clientSecret ? [] : ['SVC_CLIENT_SECRET']),
  ];
  if (missing.length > 0 && !file) {
    throw new UsageError(
      // Where the packet is, too: a newcomer in a sandbox's checkout has it at hand without knowing the variable.
      `missing credentials: set ${missing.join(', ')} (or SVC_CREDENTIALS_FILE to a credential packet: the ` +
        "sandbox's is DATA_DIR/credentials.json, so in its checkout export SVC_CREDENTIALS_FILE=data/credentials.json)",
    );
  }
  if (missing.length > 0) throw incompletePacket(file!, packet, missing);
  try {
    checkedBaseUrl(baseUrl!);
  } catch (error) {
    const from = text(env.SVC_BASE_URL) ? 'SVC_BASE_URL' : `baseUrl of ${file}`;
    throw new UsageError(`${from}: ${(error as Error).message}`);
  }
  return {
    baseUrl: baseUrl!,
    clientId: clientId!,
    clientSecret: clientSecret!,
    ...(env.SVC_SCOPE ? { scope: env.SVC_SCOPE } : {}),
  };
}

/**
 * The service's address as SVC_CREDENTIALS_FILE says it now, and a client (`to`) for it, when it is no longer
 * `baseUrl` for the same client id: a sandbox restarted on another port rewrites its packet's baseUrl, which a
 * running `svc listen` follows. Undefined when nothing moved, when SVC_BASE_URL sets the address, when the packet
 * names another client (another sandbox: its listener is not this one's), or when it cannot be read just now.
 */
export function movedPacket<T>(
  env: Env,
  current: { baseUrl: string; clientId: string },
  to: (credentials: CliCredentials) => T,
): { baseUrl: string; client: T } | undefined {
  if (!env.SVC_CREDENTIALS_FILE || env.SVC_BASE_URL) return undefined;
  let now: CliCredentials;
  try {
    now = credentialsFromEnv(env);
  } catch {
    return undefined;
  }
  if (now.baseUrl === current.baseUrl || now.clientId !== current.clientId) return undefined;
  return { baseUrl: now.baseUrl, client: to(now) };
}

const MEMBER_OF: Record<string, string> = {
  SVC_BASE_URL: 'baseUrl',
  SVC_CLIENT_ID: 'client_id',
  SVC_CLIENT_SECRET: 'client_secret',
};

/**
 * SVC_CREDENTIALS_FILE set, but the file lacks members: said as such. It was told to set the variables "or
 * SVC_CREDENTIALS_FILE", which was set; and a file written with createClient's names (clientId) looked right.
 */
function incompletePacket(file: string, packet: object, missing: string[]): UsageError {
  const members = missing.map((variable) => MEMBER_OF[variable]!);
  const camel = Object.keys(packet).filter((key) => ['clientId', 'clientSecret', 'base_url', 'baseURL'].includes(key));
  const named = camel.length
    ? ` (it has ${camel.join(', ')}: a credential packet names them baseUrl, client_id and client_secret)`
    : '';
  return new UsageError(
    `missing credentials: SVC_CREDENTIALS_FILE ${file} has no ${members.join(', ')}${named}, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set`,
  );
}
