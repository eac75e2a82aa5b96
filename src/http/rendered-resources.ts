/**
 * A list page reads which rows it holds and at which versions, and renders only what it has not rendered
 * before.
 *
 * A resource's representation is a function of its version: every change of the resource, a new version of
 * one of its files included, raises `meta.version` by one (SPEC). So the JSON of a tenant's (type, id,
 * version), once rendered, is that version's JSON for good, and a page needs from the database only the
 * rows' ids and versions; the rows missing here are read in full (one read) and rendered by the route's
 * compiled serialiser. A list of 100 rows then costs PostgreSQL and the driver three columns per row
 * instead of every column, and the service neither serialises nor encodes again the rows it has seen: they
 * are kept as UTF-8 and the page is one copy of them.
 *
 * The missing rows are read a moment after the page's ids and versions (two statements, as a page whose
 * files are loaded after its rows always was): a row changed in between appears at its newer version, a row
 * gone in between is left out of the page. A change made to a row outside the service must raise its
 * version, as the version rule already asks.
 */
import type { FastifyReply } from 'fastify';
import { TwoGenerationCache } from '../lib/two-generation-cache.js';
import type { ListMetaValue, ResourceObject } from './envelope.js';

/** What a list reads first: the row's id, its version and its place in the list (the cursor's position). */
export interface ListedVersion {
  id: string;
  version: number;
  seq: number;
}

/** The rendered JSON of one version of one resource, and whose it is. */
interface Rendered {
  kind: string;
  tenantId: string;
  version: number;
  json: Buffer;
}

export class RenderedResources {
  /**
   * By resource id (ids are unique across kinds and tenants; the entry says whose it is), the latest version
   * rendered replacing an older one; half the capacity per generation.
   */
  private readonly cache: TwoGenerationCache<string, Rendered>;

  /** @param capacity bytes of JSON kept at most; 0 keeps nothing (every page renders every row) */
  constructor(capacity: number) {
    this.cache = new TwoGenerationCache(capacity / 2, (rendered) => rendered.json.length);
  }

  /**
   * The JSON of each listed row, in the page's order (a row gone since it was listed is left out).
   * @param load the tenant's resources with these ids, in any order (another tenant's are simply not found)
   * @param serialize a resource's JSON by the response's compiled serialiser (`serializeResource`)
   */
  async page<A>(
    kind: string,
    tenantId: string,
    listed: readonly ListedVersion[],
    load: (ids: string[]) => Promise<readonly ResourceObject<A>[]>,
    serialize: (resource: ResourceObject<A>) => string,
  ): Promise<Buffer[]> {
    const held = listed.map((row) => {
      const rendered = this.cache.get(row.id);
      return rendered?.version === row.version && rendered.tenantId === tenantId && rendered.kind === kind
        ? rendered.json
        : undefined;
    });
    const missing = listed.filter((_, at) => held[at] === undefined);
    if (missing.length === 0) return held as Buffer[];

    const loaded = new Map<string, Buffer>();
    for (const resource of await load(missing.map((row) => row.id))) {
      const json = Buffer.from(serialize(resource), 'utf8');
      loaded.set(resource.id, json);
      this.cache.set(resource.id, { kind, tenantId, version: resource.meta.version, json });
    }
    const page: Buffer[] = [];
    listed.forEach((row, at) => {
      const json = held[at] ?? loaded.get(row.id);
      if (json !== undefined) page.push(json);
    });
    return page;
  }
}

const DATA_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/**
 * Sends a page of a list from its rows' JSON (`RenderedResources.page`), in the list's envelope
 * (`ListSchema`): one copy of the rows into the response, which goes out without encoding.
 */
export function sendRenderedList(reply: FastifyReply, rows: readonly Buffer[], meta: ListMetaValue) {
  const parts: Buffer[] = [DATA_START];
  rows.forEach((row, at) => {
    if (at > 0) parts.push(COMMA);
    parts.push(row);
  });
  parts.push(Buffer.from(`],"meta":${JSON.stringify(meta)}}`));
  return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts));
}
