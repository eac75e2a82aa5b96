/**
 * The webhook verification snippets of the API reference's introduction (its "Webhooks" section). Each is a
 * file of examples/webhook-verification/, read when the document is built and shown whole, so what an integrator
 * copies is what tests/webhooks/verification-snippets.test.ts runs against the service's real deliveries.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../lib/package-root.js';

export const VERIFICATION_DIRECTORY = path.join(PACKAGE_ROOT, 'examples', 'webhook-verification');

/** The snippets in the order shown: the file, its code block's language, and the heading above it. */
export const VERIFICATION_SNIPPETS = [
  { file: 'verify.py', language: 'python', heading: 'Python 3 (standard library only): verify.py' },
  { file: 'Verify.java', language: 'java', heading: 'Java 17+ (javax.crypto, no dependencies): Verify.java' },
  {
    file: 'verify.sh',
    language: 'bash',
    heading: 'Shell and OpenSSL, to check a saved delivery (one secret): verify.sh',
  },
] as const;

export function verificationSnippet(file: string): string {
  const text = readFileSync(path.join(VERIFICATION_DIRECTORY, file), 'utf8');
  // A fence inside would end the code block early and show the rest as prose.
  if (text.includes('```')) throw new Error(`${file} holds a Markdown code fence: it cannot be shown whole`);
  return text;
}

let blocks: string | undefined;

/** The snippets as Markdown: a heading and a fenced block per file, the file's text unchanged. */
export function verificationSnippetBlocks(): string {
  blocks ??= VERIFICATION_SNIPPETS.map(
    ({ file, language, heading }) =>
      `### ${heading}\n\n\`\`\`${language}\n${verificationSnippet(file).trimEnd()}\n\`\`\`\n`,
  ).join('\n');
  return blocks;
}
