/**
 * An upload's body may be no longer than MAX_UPLOAD_REQUEST_BYTES, whatever it declares. The upload scope
 * refuses a Content-Length past it before reading; a body sent chunked declares no length, and was read to its
 * end however long it was: 200 MB before the first delimiter, or after the closing one, were read and scanned
 * by both multipart splitters before the 422, or the 201 of the file in front of them (hostile-tenant probe).
 * This counts the body's bytes as they arrive; past the bound it stops the parser, and the upload is a 413.
 */
import type { IncomingMessage } from 'node:http';
import { Problem } from '../../http/problem.js';
import { MAX_UPLOAD_BYTES, MAX_UPLOAD_REQUEST_BYTES } from './limits.js';

export class UploadBodyLength {
  /** Whether the body went past the bound (the parser was stopped; the rest is not to be read). */
  exceeded = false;
  #seen = 0;
  readonly #raw: IncomingMessage;
  readonly #count = (chunk: Buffer) => {
    this.#seen += chunk.length;
    if (this.#seen > MAX_UPLOAD_REQUEST_BYTES) this.#exceed();
  };

  /** Start it before the parser's pipe, in the same tick: the chunk that passes the bound is not parsed. */
  constructor(raw: IncomingMessage) {
    this.#raw = raw;
    raw.on('data', this.#count);
  }

  stop(): void {
    this.#raw.off('data', this.#count);
  }

  #exceed(): void {
    this.exceeded = true;
    this.stop();
    const raw = this.#raw;
    raw.unpipe();
    raw.pause();
    // The multipart plugin takes an error of the request stream as the end of the form: it fails the file
    // being read and the part awaited with it. Nothing else listens, and the body is left unread.
    if (raw.listenerCount('error') > 0) raw.emit('error', uploadBodyTooLong());
  }
}

/**
 * 413 for a body longer than any acceptable upload. One whose Content-Length says so is not parsed. Either
 * way the connection is closed after the answer, once what the client sent meanwhile is dropped
 * (lingering-close.ts): a chunked body past the bound kept its connection alive while the rest was dropped,
 * up to the bound again or the request's time, and the app's close waited for it (a slow client held a
 * SIGTERM past the shutdown limit).
 */
export function uploadBodyTooLong(declared?: number): Problem {
  const detail = (body: string) =>
    `The request body is ${body}, more than a ${MAX_UPLOAD_BYTES}-byte file can make it.`;
  const text = declared === undefined ? `longer than ${MAX_UPLOAD_REQUEST_BYTES} bytes` : `${declared} bytes long`;
  return new Problem('payload-too-large', detail(text), { headers: { connection: 'close' } });
}
