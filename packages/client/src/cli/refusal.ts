import type { ApiError } from '../errors.js';

/**
 * What svc prints for a request the service refused: the problem, then what is wrong with each field (the
 * problem's detail names the fields only; an unknown `--events` type is answered with the ones there are).
 */
export function writeRefusal(error: ApiError): void {
  process.stderr.write(`svc: ${error.message}\n`);
  for (const [field, messages] of Object.entries(error.fieldErrors))
    process.stderr.write(`  ${field}: ${messages.join('; ')}\n`);
}
