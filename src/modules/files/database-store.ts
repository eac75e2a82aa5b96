/**
 * The first FileStore: blobs in the database, as rows of 256 KiB (`file_chunks`). It works the same on
 * PostgreSQL and PGlite, is covered by the database's backups, and never needs a whole file in memory:
 * writing and reading go one chunk at a time, each its own short statement, so no transaction stays open
 * while a client is slow (PGlite has a single connection).
 */
import { types } from '@electric-sql/pglite';
import { type Kysely, sql } from 'kysely';
import type { AppDatabase } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { FileStore, StoredBlob } from './store.js';

/** The size of every stored chunk but a file's last. */
export const CHUNK_BYTES = 256 * 1024;

type ChunkWriter = (blobId: string, ordinal: number, data: Buffer) => Promise<void>;

/**
 * Writes a chunk with its bytes as a binary parameter. pg sends a Buffer as such. PGlite's own bytea
 * serializer would build a string per byte; passing the bytes through makes its protocol writer send
 * them binary. The statement goes to PGlite directly, so Kysely's connection is held meanwhile: on
 * PGlite's single session it must not run inside another request's open transaction.
 */
function chunkWriter(database: AppDatabase): ChunkWriter {
  const { db, pglite } = database;
  if (!pglite) {
    return async (blobId, ordinal, data) => {
      await db.insertInto('file_chunks').values({ blob_id: blobId, ordinal, data }).execute();
    };
  }
  const passBytes = { [types.BYTEA]: (bytes: unknown) => bytes as string };
  return async (blobId, ordinal, data) => {
    await db.connection().execute(() =>
      pglite.query('insert into file_chunks (blob_id, ordinal, data) values ($1, $2, $3)', [blobId, ordinal, data], {
        serializers: passBytes,
      }),
    );
  };
}

export class DatabaseFileStore implements FileStore {
  private readonly db: Kysely<Database>;
  private readonly writeChunk: ChunkWriter;

  constructor(
    database: AppDatabase,
    private readonly clock: Clock,
  ) {
    this.db = database.db;
    this.writeChunk = chunkWriter(database);
  }

  async put(tenantId: string, content: AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    const blobId = newId('file');
    await this.db
      .insertInto('file_blobs')
      .values({ id: blobId, tenant_id: tenantId, created_at: this.clock.now() })
      .execute();
    let ordinal = 0;
    let sizeBytes = 0;
    // One buffer per upload, filled and written again and again: a statement has sent its copy of the
    // bytes when it completes, so the buffer can be refilled without allocating per chunk.
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let filled = 0;
    const flush = async () => {
      await this.writeChunk(blobId, ordinal++, chunk.subarray(0, filled));
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

  /**
   * Reads chunks as hex text: Buffer.from(hex) is native, PGlite's own bytea parser is a loop per byte.
   * The number of chunks is known first, so the stream ends with its last chunk rather than one query
   * later (a response that ends late keeps its connection busy after the client has everything).
   */
  async *read(tenantId: string, blobId: string): AsyncIterable<Buffer> {
    const { chunks } = await this.db
      .selectFrom('file_chunks')
      .innerJoin('file_blobs', 'file_blobs.id', 'file_chunks.blob_id')
      .select(({ fn }) => fn.countAll<number>().as('chunks'))
      .where('file_blobs.tenant_id', '=', tenantId)
      .where('file_blobs.id', '=', blobId)
      .executeTakeFirstOrThrow();
    for (let ordinal = 0; ordinal < Number(chunks); ordinal++) {
      const chunk = await this.db
        .selectFrom('file_chunks')
        .select(sql<string>`encode(data, 'hex')`.as('hex'))
        .where('blob_id', '=', blobId)
        .where('ordinal', '=', ordinal)
        .executeTakeFirstOrThrow();
      yield Buffer.from(chunk.hex, 'hex');
    }
  }

  async delete(tenantId: string, blobId: string): Promise<void> {
    await this.db.deleteFrom('file_blobs').where('tenant_id', '=', tenantId).where('id', '=', blobId).execute();
  }
}

/**
 * Deletes blobs that no file version refers to and that are older than `before` (and, when given, not older
 * than `notBefore`): what an upload interrupted by a crash leaves behind (a failed upload removes its blob
 * itself). The created-at index finds the range; each blob in it is checked for a version.
 */
export async function purgeOrphanBlobs(db: Kysely<Database>, before: Date, notBefore?: Date): Promise<number> {
  let query = db.deleteFrom('file_blobs').where('created_at', '<', before);
  if (notBefore !== undefined) query = query.where('created_at', '>=', notBefore);
  const result = await query
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(selectFrom('file_versions').select('blob_id').whereRef('file_versions.blob_id', '=', 'file_blobs.id')),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
