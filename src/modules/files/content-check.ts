/**
 * Checks a file's bytes while they stream through: counts them against the size limit and decides the
 * type from the leading bytes (magic numbers), never from the declared part type or the file name.
 * Nothing but the first few kilobytes is ever held.
 */
import { fileTypeFromBuffer } from 'file-type';
import { Problem, validationProblem } from '../../http/problem.js';
import { extensionsOf, type NamedFileType } from './file-names.js';

export interface AcceptedFileType {
  /** A type that file names are made for (file-names.ts), so that every stored file gets a fitting name. */
  mime: NamedFileType;
}

export interface ContentRules {
  accepted: readonly AcceptedFileType[];
  maxBytes: number;
}

/** What file-type needs to recognise any format it knows (its `reasonableDetectionSizeInBytes`). */
const SNIFF_BYTES = 4100;

export function tooLarge(maxBytes: number): Problem {
  return new Problem('payload-too-large', `The file is larger than ${maxBytes} bytes (10 MiB).`);
}

async function judge(head: Buffer, accepted: readonly AcceptedFileType[]): Promise<AcceptedFileType> {
  const detected = await fileTypeFromBuffer(head);
  const match = detected && accepted.find((type) => type.mime === detected.mime);
  if (match) return match;
  const allowed = accepted.map((type) => extensionsOf(type.mime)![0].toUpperCase()).join(', ');
  throw new Problem(
    'unsupported-media-type',
    detected
      ? `The file's content is ${detected.mime}; only ${allowed} is accepted here. The content decides, not the name or the declared type.`
      : `The file's content is not a recognisable ${allowed} file. The content decides, not the name or the declared type.`,
  );
}

/**
 * The bytes of `source`, passed through once they are judged. `truncated` says whether the parser cut
 * the file at its limit. Throws 413, 415 or 422 (empty) as soon as the bytes show the problem; on
 * success `found.type` holds the detected type.
 */
export async function* checkedContent(
  source: AsyncIterable<Buffer>,
  rules: ContentRules,
  truncated: () => boolean,
  found: { type?: AcceptedFileType },
): AsyncGenerator<Buffer> {
  let head: Buffer[] = [];
  let headBytes = 0;
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (truncated() || total > rules.maxBytes) throw tooLarge(rules.maxBytes);
    if (found.type) {
      yield chunk;
      continue;
    }
    head.push(chunk);
    headBytes += chunk.length;
    if (headBytes >= SNIFF_BYTES) {
      const bytes = Buffer.concat(head, headBytes);
      head = [];
      found.type = await judge(bytes, rules.accepted);
      yield bytes;
    }
  }
  if (truncated()) throw tooLarge(rules.maxBytes);
  if (total === 0) throw validationProblem({ file: ['must not be empty'] }, 'The uploaded file is empty.');
  if (!found.type) {
    const bytes = Buffer.concat(head, headBytes);
    found.type = await judge(bytes, rules.accepted);
    yield bytes;
  }
}
