/**
 * Where file contents live. The service reads and writes bytes only through this interface, as streams
 * of chunks, so that no whole file is ever held in memory and an object store can replace the database
 * implementation without touching the upload or download code.
 */

export interface StoredBlob {
  blobId: string;
  sizeBytes: number;
}

export interface FileStore {
  /**
   * Stores the bytes of `content` as a new blob. When `content` throws (a check failed, the client went
   * away) or the store fails, whatever was written is removed again and the error is rethrown. Called
   * outside any transaction: the content arrives at the client's pace.
   */
  put(tenantId: string, content: AsyncIterable<Uint8Array>): Promise<StoredBlob>;
  /** The blob's bytes, in order, one chunk at a time. */
  read(tenantId: string, blobId: string): AsyncIterable<Buffer>;
  /** Removes a blob; removing one that does not exist is not an error. */
  delete(tenantId: string, blobId: string): Promise<void>;
}
