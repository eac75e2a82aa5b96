/**
 * Versioned files of an owner (a visit's return label, a message's attachment): accepting an upload and
 * serving the latest version. What differs between owners is described by a FileOwner; the pipeline is
 * the same for all.
 */
import { Readable } from 'node:stream';
import { transaction } from '../../db/transaction.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database, ListedFileVersion } from '../../db/schema.js';
import { notFound, Problem } from '../../http/problem.js';
import type { Clock } from '../../lib/clock.js';
import { BYTES_PER_MIB } from '../tenants/schemas.js';
import { addStorageUse, type TenantStorage, tenantStorage } from '../tenants/service.js';
import { attachmentDisposition, safeFileName } from './file-names.js';
import { MAX_FILE_VERSIONS } from './limits.js';
import { receiveFile, type UploadRules } from './multipart-upload.js';
import * as repository from './repository.js';
import type { FileStore } from './store.js';

export interface FileOwner {
  /** Stored with each version (`file_versions.owner_type`), e.g. `site-visit-return-label`. */
  ownerType: string;
  /** Names the owner in a 404, e.g. `Site visit`. */
  ownerName: string;
  /** Names the file in a 404 before the first upload, e.g. `Return label`. */
  fileName: string;
  rules: UploadRules;
  /** Whether the owner exists and is the tenant's; checked before the body is read. */
  exists(db: Kysely<Database>, tenantId: string, ownerId: string): Promise<boolean>;
  /**
   * In the new version's transaction: records the change on the owner (version + 1, updatedAt) and so
   * locks it until commit. Returns the updatedAt written (`now`, or the owner's last change when that is
   * later: the version's uploadedAt must not go back either); undefined when the owner no longer exists.
   */
  touch(tx: Transaction<Database>, tenantId: string, ownerId: string, now: Date): Promise<Date | undefined>;
}

export interface FileDeps {
  db: Kysely<Database>;
  files: FileStore;
  clock: Clock;
}

/** The versions of each owner's file, oldest first, for several owners at once (a page of a list). */
export async function fileVersionsByOwner(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  ownerType: string,
  ownerIds: readonly string[],
): Promise<Map<string, ListedFileVersion[]>> {
  const byOwner = new Map<string, ListedFileVersion[]>();
  for (const row of await repository.listVersions(db, tenantId, ownerType, ownerIds)) {
    const versions = byOwner.get(row.owner_id);
    if (versions) versions.push(row);
    else byOwner.set(row.owner_id, [row]);
  }
  return byOwner;
}

/** 422 file-version-limit-reached once the owner's file has `MAX_FILE_VERSIONS` versions. */
function assertRoomForVersion(owner: FileOwner, versions: number): void {
  if (versions < MAX_FILE_VERSIONS) return;
  throw new Problem(
    'file-version-limit-reached',
    `${owner.fileName} already has ${versions} versions, the most a file may have; no further version can be uploaded.`,
    { errors: { file: [`at most ${MAX_FILE_VERSIONS} versions may be uploaded`] } },
  );
}

/** What the tenant's files hold and may hold (404 for a tenant gone). */
async function storageOf(db: Kysely<Database> | Transaction<Database>, tenantId: string): Promise<TenantStorage> {
  const storage = await tenantStorage(db, tenantId);
  if (!storage) throw notFound('Tenant');
  return storage;
}

/** 422 storage-limit-reached: `adding` bytes more would take the tenant's files past its limit. */
function storageLimitReached({ limitBytes, usedBytes }: TenantStorage, adding: number): Problem {
  const mib = (bytes: number) => `${(bytes / BYTES_PER_MIB).toFixed(1)} MiB`;
  const detail =
    adding === 0
      ? `Your files hold ${mib(usedBytes)} of the ${mib(limitBytes)} they may hold in all; nothing more can be uploaded until the operator raises the limit.`
      : `This file (${mib(adding)}) would take your files past the ${mib(limitBytes)} they may hold in all (${mib(usedBytes)} are used).`;
  return new Problem('storage-limit-reached', detail, {
    errors: { file: [`the tenant's files may hold at most ${limitBytes} bytes in all`] },
    extensions: { storageLimitBytes: limitBytes, storageUsedBytes: usedBytes },
  });
}

/**
 * Accepts one upload: 404 unless the owner is the tenant's, 422 when its file has as many versions as it may
 * or the tenant's files are at their storage limit (both before the body is read), then streams the file
 * into the store (outside any transaction), then one short transaction counts again under the owner's lock,
 * adds the file's bytes to the tenant's count unless that would pass its limit, adds the version and
 * touches the owner. On any failure the stored blob is removed again. Returns every version of the owner's
 * file.
 */
export async function acceptUpload(
  deps: FileDeps,
  request: FastifyRequest,
  owner: FileOwner,
  ownerId: string,
): Promise<ListedFileVersion[]> {
  const { tenantId } = request.auth;
  if (!(await owner.exists(deps.db, tenantId, ownerId))) throw notFound(owner.ownerName);
  assertRoomForVersion(owner, await repository.countVersions(deps.db, tenantId, owner.ownerType, ownerId));
  const storage = await storageOf(deps.db, tenantId);
  if (storage.usedBytes >= storage.limitBytes) throw storageLimitReached(storage, 0);
  const file = await receiveFile(request, deps.files, tenantId, owner.rules);
  try {
    return await transaction(deps.db, tenantId, async (tx) => {
      const now = await owner.touch(tx, tenantId, ownerId, deps.clock.now());
      if (now === undefined) throw notFound(owner.ownerName);
      const versions = await repository.countVersions(tx, tenantId, owner.ownerType, ownerId);
      assertRoomForVersion(owner, versions);
      if (!(await addStorageUse(tx, tenantId, file.sizeBytes)))
        throw storageLimitReached(await storageOf(tx, tenantId), file.sizeBytes);
      await repository.insertVersion(tx, tenantId, {
        owner_type: owner.ownerType,
        owner_id: ownerId,
        version: versions + 1,
        blob_id: file.blobId,
        file_name: file.fileName,
        content_type: file.contentType,
        size_bytes: file.sizeBytes,
        uploaded_at: now,
      });
      return repository.listVersions(tx, tenantId, owner.ownerType, [ownerId]);
    });
  } catch (error) {
    await deps.files.delete(tenantId, file.blobId).catch(() => undefined);
    throw error;
  }
}

/**
 * Streams the latest version of the owner's file: its detected type, exact length, and its safe name
 * as an attachment. 404 when the owner is not the tenant's or nothing was uploaded yet. The tenant is the
 * caller's; the operator API, which has no tenant of its own, names the owner's.
 */
export async function sendLatestFile(
  deps: FileDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  owner: FileOwner,
  ownerId: string,
  tenantId: string = request.auth.tenantId,
) {
  if (!(await owner.exists(deps.db, tenantId, ownerId))) throw notFound(owner.ownerName);
  const latest = await repository.findLatestVersion(deps.db, tenantId, owner.ownerType, ownerId);
  if (!latest) throw notFound(`${owner.fileName} (nothing uploaded yet)`);
  // Names stored since uploads make them safe come back unchanged; older ones (kept as they are in the
  // JSON) get the detected type's extension here, so that no download is saved as another type.
  const fileName = safeFileName(latest.file_name, latest.content_type, owner.rules.defaultBaseName);
  reply
    .header('content-type', latest.content_type)
    .header('content-length', String(latest.size_bytes))
    .header('content-disposition', attachmentDisposition(fileName))
    .header('x-content-type-options', 'nosniff');
  // The operator API's answers are already no-store (registerNoStore), as its document says: kept, not
  // weakened to what the client's downloads are.
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
  // HEAD answers with the headers only: do not read the chunks just to discard them.
  const body =
    request.method === 'HEAD'
      ? Readable.from([])
      : Readable.from(deps.files.read(tenantId, latest.blob_id), { objectMode: false });
  return reply.send(body);
}
