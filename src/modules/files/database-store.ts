/**
 * The first FileStore: blobs in the database, as rows of 256 KiB (`file_chunks`). It works
 * the same on PostgreSQL and PGlite, is covered by the database's backups, and never needs a whole file
 * in memory: writing and reading go one chunk at a time, each its own short statement, so no
 * transaction stays open while a client is slow (PGlite has a single connection).
 *
 * On PostgreSQL chunks are sent as binary parameters (no copy into text). PGlite's own bytea parameter
 * encoding builds a JavaScript string per byte, so there chunks travel as hex text that the database
 * decodes; reads use hex on both (Buffer.from(hex) is native).
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { AppDatabase } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { FileStore, StoredBlob } from './store.js';

/** The size of every stored chunk but a file's last. */
export const CHUNK_BYTES = 256 * 1024;

export class DatabaseFileStore implements FileStore {
  private readonly db: Kysely<Database>;
  private readonly binaryParameters: boolean;

  constructor(
    database: AppDatabase,
    private readonly clock: Clock,
  ) {
    this.db = database.db;
    this.binaryParameters = database.kind === 'postgres';
  }

  private chunkValue(data: Buffer): Buffer | RawBuilder<Buffer> {
    return this.binaryParameters ? data : sql<Buffer>`decode(${data.toString('hex')}, 'hex')`;
  }

  async put(tenantId: string, content: AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    const blobId = newId('file');
    await this.db.insertInto('file_blobs').values({ id: blobId, tenant_id: tenantId, created_at: this.clock.now() }).execute();
    let ordinal = 0;
    let sizeBytes = 0;
    // One buffer per upload, filled and written again and again: the statement has sent its copy of the
    // bytes when it completes, so the buffer can be refilled without allocating per chunk.
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let filled = 0;
    const flush = async () => {
      await this.db
        .insertInto('file_chunks')
        .values({ blob_id: blobId, ordinal: ordinal++, data: this.chunkValue(chunk.subarray(0, filled)) })
        .execute();
      filled = 0;
    };
    try {
      for await (const piece of content) {
        sizeBytes += piece.length;
        for (let offset = 0; offset < piece.length; ) {
          const take = Math.min(CHUNK_BYTES - filled, piece.length - offset);
          chunk.set(piece.subarray(offset, offset + take), filled);
          filled += take;
          offset += take;
          if (filled === CHUNK_BYTES) await flush();
        }
      }
      if (filled > 0) await flush();
      return { blobId, sizeBytes };
    } catch (error) {
      await this.delete(tenantId, blobId).catch(() => undefined);
      throw error;
    }
  }

  async *read(tenantId: string, blobId: string): AsyncIterable<Buffer> {
    const blob = await this.db.selectFrom('file_blobs').select('id').where('tenant_id', '=', tenantId).where('id', '=', blobId).executeTakeFirst();
    if (!blob) return;
    for (let ordinal = 0; ; ordinal++) {
      const chunk = await this.db
        .selectFrom('file_chunks')
        .select(sql<string>`encode(data, 'hex')`.as('hex'))
        .where('blob_id', '=', blobId)
        .where('ordinal', '=', ordinal)
        .executeTakeFirst();
      if (!chunk) return;
      yield Buffer.from(chunk.hex, 'hex');
    }
  }

  async delete(tenantId: string, blobId: string): Promise<void> {
    await this.db.deleteFrom('file_blobs').where('tenant_id', '=', tenantId).where('id', '=', blobId).execute();
  }
}

/**
 * Deletes blobs that no file version refers to and that are older than `before`: what an upload
 * interrupted by a crash leaves behind (a failed upload removes its blob itself).
 */
export async function purgeOrphanBlobs(db: Kysely<Database>, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('file_blobs')
    .where('created_at', '<', before)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('file_versions').select('blob_id').whereRef('file_versions.blob_id', '=', 'file_blobs.id'))))
    .executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
