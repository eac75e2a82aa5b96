/**
 * The problems of an upload's multipart body: each says which part or limit of the form is at fault, in
 * `detail` and under `errors.file` (a form that cannot be read has no file to take). All are 422
 * `validation-error`, as the form's shape always was; only a file over 10 MiB is 413 (content-check.ts).
 * Their texts are fixed or repeat a part's name by the rule of request-names.ts, so that no problem grows with
 * the body: a name with a control or invisible character, or a long one, is not repeated at all, only that
 * character named (`U+0000 at character 2`) or its length given.
 */
import { Problem, validationProblem } from '../../http/problem.js';
import { whyNotShown } from '../../http/request-names.js';
import { tooLarge } from './content-check.js';
import { MAX_UPLOAD_BYTES, MULTIPART_LIMITS } from './limits.js';
import type { PartHeaderWatch } from './part-headers.js';

export const FILE_FIELD = 'file';

/** A part as the parser read it (busboy's `isPartAFile` sees every part it reads, delivered or not). */
export interface ReadPart {
  /** Undefined when the part's Content-Disposition has no name parameter. */
  name: string | undefined;
  isFile: boolean;
  /** A plain value cut at `fieldSize`. */
  valueTruncated?: boolean;
}

/** What is known of the form when the parser fails. */
export interface FormSoFar {
  headers: PartHeaderWatch;
  /** The parts the parser read, in order. */
  read: readonly ReadPart[];
  fileSeen: boolean;
}

/** The body cannot be read as a form; `reason` ends the sentence. */
export function unreadableForm(reason: string): Problem {
  return validationProblem(
    { [FILE_FIELD]: [`could not be read: ${reason}`] },
    `The multipart/form-data body could not be read: ${reason}.`,
  );
}

/** The form has more of something than the parser reads; `what` is e.g. `6 parts`. */
function overLimit(message: string, what: string): Problem {
  return validationProblem(
    { [FILE_FIELD]: [`${message}; the form has more than ${what}, the most read`] },
    `The form has more than ${what}, the most read: an upload is one part, the file in the form field "file".`,
  );
}

function cutValue(part: ReadPart): string[] {
  return part.valueTruncated
    ? [`is longer than ${MULTIPART_LIMITS.fieldSize} bytes, the most read of a plain form value`]
    : [];
}

/** A part other than the one file the form may hold (the first such part: the rest is not read). */
export function unexpectedPart(part: ReadPart, fileSeen: boolean): Problem {
  if (part.name === FILE_FIELD && part.isFile) {
    return validationProblem({ [FILE_FIELD]: ['must be sent once; the form carries more than one file'] });
  }
  if (part.name === FILE_FIELD) {
    return validationProblem({
      [FILE_FIELD]: [
        'must be a file part: its Content-Disposition has no filename, so it is a plain form value',
        ...cutValue(part),
      ],
    });
  }
  // A name the rule does not repeat (a problem carries no control or invisible character of the request,
  // escaped or not, nor a name of any length): the error goes under `file`, as for a part without a name.
  const why = part.name ? whyNotShown(part.name) : undefined;
  if (!part.name || why !== undefined) {
    // No name to file the error under: it is the file's (the part is likely the file, misnamed).
    const unnamed =
      why !== undefined
        ? `a name ${why}, not repeated here`
        : part.name === ''
          ? 'an empty name (name="")'
          : 'no name (its Content-Disposition has no name)';
    return validationProblem({
      [FILE_FIELD]: [
        fileSeen
          ? `must be the only part of the form; another part has ${unnamed}`
          : `is required: the form has a part with ${unnamed}; name the file part "file"`,
      ],
    });
  }
  return validationProblem({
    [FILE_FIELD]: [fileSeen ? 'must be the only part of the form' : 'is required as the only part of the form'],
    [part.name]: ['is not a known field', ...cutValue(part)],
  });
}

/** The first part read that is not the form's one file. */
function firstStray(read: readonly ReadPart[]): ReadPart | undefined {
  return read.find((part, index) => index > 0 || !(part.isFile && part.name === FILE_FIELD));
}

/**
 * Maps what the multipart parser throws (busboy and plugin errors) to a problem. A part whose header block
 * could not be read comes first: the parser skipped it, so its errors are consequences.
 */
export function parserProblem(error: unknown, form: FormSoFar): Problem {
  if (error instanceof Problem) return error;
  const unreadable = form.headers.unreadable;
  if (unreadable !== undefined) return unreadableForm(unreadable);
  const { code, message = '' } = error as { code?: string; message?: string };
  const { parts, files, fields } = MULTIPART_LIMITS;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge(MAX_UPLOAD_BYTES);
    case 'FST_PARTS_LIMIT':
      return overLimit('must be the only part of the form', `${parts} parts`);
    case 'FST_FILES_LIMIT':
      return overLimit('must be sent once', `${files} files`);
    case 'FST_FIELDS_LIMIT':
      return overLimit('must be the only part of the form', `${fields} plain (non-file) fields`);
    // A part named like a property of every object (`__proto__`, `constructor`), or a plain value declared
    // as JSON that is not: the plugin drops it with this error instead of delivering it. Either is a part
    // that the form may not have, reported by name as any other.
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR': {
      const stray = firstStray(form.read);
      if (stray) return unexpectedPart(stray, form.fileSeen);
      break;
    }
    case 'FST_MP_PREMATURE_CLOSE':
      return unreadableForm('the connection closed before the body was complete');
  }
  // Busboy's errors have no code: their messages are matched (tests/files/multipart-form.errors.test.ts pins each).
  if (message.includes('Boundary not found')) {
    return unreadableForm('the Content-Type multipart/form-data has no boundary parameter');
  }
  if (message.includes('Unexpected end') || message.includes('terminated early')) {
    return form.headers.parts > 0 || form.read.length > 0
      ? unreadableForm('the body ends before its closing delimiter (the boundary followed by "--"): it is incomplete')
      : unreadableForm('no line of the body is a delimiter of the boundary that the Content-Type declares');
  }
  return unreadableForm('the body is malformed');
}

/**
 * The problem of a body the parser read to its end, if it has one: a part the watch found unreadable, or
 * readable but not read by the parser (busboy skips a part whose name or filename holds a line break, again
 * without an error), or no file at all.
 */
export function endOfFormProblem(form: FormSoFar): Problem | undefined {
  const unreadable = form.headers.unreadableAtEnd();
  if (unreadable !== undefined) return unreadableForm(unreadable);
  if (form.headers.readable > form.read.length) {
    return unreadableForm(
      'a part has a Content-Disposition that cannot be read as form-data with a name (a name or filename with a line break is not read)',
    );
  }
  if (form.fileSeen) return undefined;
  if (form.headers.bytes === 0) {
    return validationProblem(
      { [FILE_FIELD]: ['is required: the body is empty'] },
      'The multipart/form-data body is empty: send the file in the form field "file".',
    );
  }
  if (form.headers.parts === 0 && form.read.length === 0) {
    return validationProblem(
      { [FILE_FIELD]: ['is required: the form has no parts'] },
      'The form has no parts: send the file in the form field "file".',
    );
  }
  return validationProblem({ [FILE_FIELD]: ['is required: send the file as the form field "file"'] });
}
