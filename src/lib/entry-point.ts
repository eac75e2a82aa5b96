/**
 * What the service's commands (`npm start`, `npm run migrate`) do before anything else: they take no
 * arguments (they are configured by the environment), so `--help` prints what the command does and any other
 * argument (`--port 3001`) is refused, naming it, rather than ignored; and a configuration the command cannot
 * read is said as the variables and what each takes, without a stack. Nothing is opened before. A Node.js
 * older than the supported line is warned of (not refused: it may still run, as Debian's 20 does).
 */
import { type Config, ConfigError, loadConfig } from '../config.js';

/** Exits with the usage for `--help` (0) or an argument the command does not take (2); otherwise returns. */
export function refuseArguments(command: string, usage: string, args = process.argv.slice(2)): void {
  if (args.length === 0) return;
  if (args.every((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  process.stderr.write(`${command}: unknown argument ${args[0]}\n${usage}\n`);
  process.exit(2);
}

/** The configuration, or (unreadable) its problems on stderr and exit 78 (EX_CONFIG). */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

/** The oldest Node.js line the service is supported on (package.json's engines). */
export const SUPPORTED_NODE_MAJOR = 22;

/** The warning for a Node.js `version` older than the supported line, or undefined. */
export function unsupportedNodeWarning(version: string): string | undefined {
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (!(major < SUPPORTED_NODE_MAJOR)) return undefined;
  return (
    `warning: this is Node.js ${version}, past its end of life; site-services is supported on Node.js ` +
    `${SUPPORTED_NODE_MAJOR} or newer (README.md, Prerequisites). It may still run, untested.`
  );
}

/** Says `unsupportedNodeWarning` on stderr when it applies. */
export function warnOfUnsupportedNode(version = process.versions.node): void {
  const warning = unsupportedNodeWarning(version);
  if (warning) process.stderr.write(`${warning}\n`);
}
