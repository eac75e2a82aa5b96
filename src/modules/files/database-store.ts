/**
 * The first FileStore: blobs in the database, as rows of at most about 256 KiB (`file_chunks`). It works
 * the same on PostgreSQL and PGlite, is covered by the database's backups, and never needs a whole file
 * in memory: writing and reading go one chunk at a time, each its own short statement, so no
 * transaction stays open while a client is slow (PGlite has a single connection).
 *
 * Chunk bytes travel as hex text decoded by the database: PGlite's own bytea parameter encoding builds
 * an array of strings per byte, hex from Buffer is native on both drivers.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { FileStore, StoredBlob } from './store.js';

export const CHUNK_BYTES = 256 * 1024;

export class DatabaseFileStore implements FileStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async put(tenantId: string, content: AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    const blobId = newId('file');
    await this.db.insertInto('file_blobs').values({ id: blobId, tenant_id: tenantId, created_at: this.clock.now() }).execute();
    let ordinal = 0;
    let sizeBytes = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await this.db
        .insertInto('file_chunks')
        .values({ blob_id: blobId, ordinal: ordinal++, data: sql<Buffer>`decode(${data.toString('hex')}, 'hex')` })
        .execute();
    };
    try {
      for await (const piece of content) {
        if (piece.length === 0) continue;
        pending.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
        pendingBytes += piece.length;
        sizeBytes += piece.length;
        if (pendingBytes >= CHUNK_BYTES) await flush();
      }
      if (pendingBytes > 0) await flush();
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
