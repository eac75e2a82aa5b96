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
  if (missing.length > 0) {
    throw new UsageError(
      `missing credentials: set ${missing.join(', ')} (or SVC_CREDENTIALS_FILE to a credentials.json)`,
    );
  }
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
