/**
 * `svc get <path>`: GET /api/v1/<path> (or a url under the base address) and print the answer. JSON is printed indented, text as it came; a
 * file (a return label, an attachment) is written as its bytes, so `svc get … > label.pdf` saves it whole:
 * decoded as text, its bytes that are not UTF-8 became U+FFFD and the file was broken.
 */
import type { SiteServicesClient } from '../client.js';
import { ABSOLUTE_URL } from '../urls.js';
import { UsageError } from './credentials.js';

export async function getCommand(
  positionals: string[],
  client: () => SiteServicesClient,
  usage: string,
  stdout: NodeJS.WriteStream = process.stdout,
): Promise<number> {
  const [target] = positionals;
  if (!target || positionals.length > 1) throw new UsageError(usage);
  // A path from the reference (`/api/v1/sites`, also without its first slash), a path under /api/v1 (`sites`),
  // or the `url` the service gave a file, which getRaw takes when it lies under the base address.
  const bare = target.replace(/^\/+/, '');
  const absolute = ABSOLUTE_URL.test(target);
  const path = absolute ? target : `/${bare.startsWith('api/') ? '' : 'api/v1/'}${bare}`;
  const response = await client()
    .getRaw(path)
    .catch((error: unknown) => {
      // Another host's URL (or a malformed one): nothing was sent, and the same command cannot succeed.
      throw absolute && error instanceof TypeError ? new UsageError(`svc get: ${error.message}`) : error;
    });
  const { body } = response;
  if (body instanceof Uint8Array) {
    // On a terminal the bytes are noise (and may be control sequences): say what came and how to keep it.
    if (stdout.isTTY) {
      const type = response.headers.get('content-type') ?? 'no content type';
      process.stderr.write(
        `svc get: the answer is a file (${type}, ${body.length} bytes); save it: svc get '${target}' > file\n`,
      );
    } else stdout.write(body);
  } else stdout.write(`${typeof body === 'string' ? body : JSON.stringify(body, null, 2)}\n`);
  if (response.status >= 400) process.stderr.write(`HTTP ${response.status}\n`);
  return response.status < 400 ? 0 : 1;
}
