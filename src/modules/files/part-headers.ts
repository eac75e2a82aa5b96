/**
 * Watches the header block of every part of a multipart body, beside the parser that reads the form
 * (@fastify/multipart over busboy). Busboy reads at most `headerPairs` header fields of a part and skips,
 * without any error or event, a part whose Content-Disposition it did not find among them (or that is not
 * form-data, or has no header block): a file part with its Content-Disposition as 17th header field
 * looked like no file at all. This header-only pass over the same bytes (busboy's own multipart splitter,
 * Dicer, the part contents discarded) says which part could not be read and why.
 */
import type { IncomingMessage } from 'node:http';
import { MIMEType } from 'node:util';
import { Dicer } from '@fastify/busboy';
import { whyNotShown } from '../../http/request-names.js';
import { MULTIPART_LIMITS } from './limits.js';

/** A part's header fields as the splitter parsed them: lower-cased name → values. */
type PartHeader = Record<string, string[]>;

const HEADERLESS = 'has no header block (no empty line ends its headers)';

/**
 * The boundary as a MIME type parser reads it. Where busboy reads another one (a Content-Type no client
 * writes, such as an unquoted boundary with a space), the watch finds no part and stays silent, and the
 * parser's own answer stands.
 */
function boundaryOf(contentType: string | undefined): string | undefined {
  try {
    return new MIMEType(contentType ?? '').params.get('boundary') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Why a part with this header block cannot be read as a form field; undefined when it can. */
function unreadableHeader(header: PartHeader): string | undefined {
  const fields = Object.values(header).reduce((count, values) => count + values.length, 0);
  // The splitter reads one field more than busboy does: that one is the field too many.
  if (fields > MULTIPART_LIMITS.headerPairs)
    return `carries more than ${MULTIPART_LIMITS.headerPairs} header fields (the most read per part)`;
  const disposition = header['content-disposition']?.[0];
  if (disposition === undefined)
    // Also when it comes after a line that is not a header field, or past the bytes read of a header block.
    return `has no Content-Disposition header among the well-formed lines of the first ${MULTIPART_LIMITS.headerSize} bytes of its header block (the most read per part)`;
  // Busboy's test (the first item of the header's parameters is form-data), as near as it goes without
  // busboy's parameter parser: quotes and white space dropped.
  const type = disposition.split(';', 1)[0]!.replace(/["\s]/g, '');
  if (type.toLowerCase() === 'form-data') return undefined;
  // The request's value, by the names' rule: repeated when printable and short, else described.
  const why = whyNotShown(type);
  if (why !== undefined) return `has a Content-Disposition type ${why}, not form-data`;
  return `has Content-Disposition ${JSON.stringify(type)}, not form-data`;
}

/**
 * What the watch has seen of a body so far. Start it in the same tick as the parser's pipe (before either
 * sees a byte): both then get every chunk in the same event, so that whatever the parser has delivered,
 * the watch has seen. Without a usable boundary it only counts bytes (the parser reports that).
 */
export class PartHeaderWatch {
  /** Parts begun (a delimiter line seen). */
  parts = 0;
  /** Parts whose header block was found readable: within the limits, Content-Disposition form-data. */
  readable = 0;
  /** Bytes of the body seen. */
  bytes = 0;
  #unreadable: string | undefined;
  #lastHeaded = true;
  readonly #raw: IncomingMessage;
  readonly #split = (chunk: Buffer) => {
    this.bytes += chunk.length;
    this.#splitter?.write(chunk);
  };
  readonly #splitter: Dicer | undefined;

  constructor(raw: IncomingMessage, contentType: string | undefined) {
    this.#raw = raw;
    raw.on('data', this.#split);
    const boundary = boundaryOf(contentType);
    if (boundary === undefined) return;
    // Dicer reads `maxHeaderSize` and `partHwm` too; its typings leave them out.
    this.#splitter = new Dicer({
      boundary,
      maxHeaderPairs: MULTIPART_LIMITS.headerPairs + 1,
      maxHeaderSize: MULTIPART_LIMITS.headerSize,
      // Never full: a full part would pause the splitter, which would then fall behind the parser. The
      // contents are discarded as they come; only the chunk being split is ever held.
      partHwm: Number.MAX_SAFE_INTEGER,
    } as Dicer.Config);
    this.#splitter.on('error', () => undefined);
    this.#splitter.on('part', (part: Dicer.PartStream) => this.#watchPart(part));
  }

  /** Why the first part that cannot be read as a form field cannot be; undefined while every part can. */
  get unreadable(): string | undefined {
    return this.#unreadable;
  }

  /** As `unreadable`, once the body has ended: the last part must have had a header block too. */
  unreadableAtEnd(): string | undefined {
    if (!this.#lastHeaded) this.#note(this.parts, HEADERLESS);
    return this.#unreadable;
  }

  /** Stops watching: the rest of the body is not looked at. */
  stop(): void {
    this.#raw.off('data', this.#split);
  }

  #watchPart(part: Dicer.PartStream): void {
    // Each part's events come synchronously as its bytes are split: a part begun while the one before had
    // no header block is the end of that one.
    if (!this.#lastHeaded) this.#note(this.parts, HEADERLESS);
    const index = ++this.parts;
    this.#lastHeaded = false;
    part.on('error', () => undefined);
    part.on('header', (header) => {
      this.#lastHeaded = true;
      const reason = unreadableHeader(header as PartHeader);
      if (reason === undefined) this.readable++;
      else this.#note(index, reason);
    });
    part.resume();
  }

  #note(index: number, reason: string): void {
    this.#unreadable ??= `part ${index} of the form ${reason}`;
  }
}
