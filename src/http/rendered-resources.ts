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
 *
 * The listing comes as one text (src/db/listing.ts), so a page is kept whole too: the same page asked again
 * (the same list, tenant and query) whose listing's text is the same holds the same rows at the same versions
 * and the same next position, and its answer is the one sent last time, byte for byte.
 */
import type { FastifyReply } from 'fastify';
import type { ListedVersion } from '../db/listing.js';
import { TwoGenerationCache } from '../lib/two-generation-cache.js';
import type { ListMetaValue, ResourceObject } from './envelope.js';
import { type ListingPage, listMeta } from './pagination.js';

/** The rendered JSON of one version of one resource, and whose it is. */
interface Rendered {
  kind: string;
  tenantId: string;
  version: number;
  json: Buffer;
}

/** A page's answer, and the listing it answers. */
interface RenderedPage {
  listing: string;
  body: Buffer;
}

/** The rows of a page, in order, and whether they are exactly the rows listed at the versions listed. */
interface PageRows {
  json: Buffer[];
  asListed: boolean;
}

export class RenderedResources {
  /**
   * By resource id (ids are unique across kinds and tenants; the entry says whose it is), the latest version
   * rendered replacing an older one; a quarter of the capacity per generation.
   */
  private readonly rows: TwoGenerationCache<string, Rendered>;
  /** By page key (`ListingPage.key`), the last answer; a quarter of the capacity per generation. */
  private readonly pages: TwoGenerationCache<string, RenderedPage>;

  /** @param capacity bytes of JSON kept at most, half rows and half pages; 0 keeps nothing */
  constructor(capacity: number) {
    this.rows = new TwoGenerationCache(capacity / 4, (rendered) => rendered.json.length);
    this.pages = new TwoGenerationCache(capacity / 4, (page) => page.body.length + page.listing.length);
  }

  /**
   * The answer to a page of a list (`ListSchema`'s envelope): the one sent last time when its listing is
   * the same, else made of its rows' JSON.
   * @param load the tenant's resources with these ids, in any order (another tenant's are simply not found)
   * @param serialize a resource's JSON by the response's compiled serialiser (`serializeResource`)
   */
  async list<A>(
    kind: string,
    tenantId: string,
    page: ListingPage,
    load: (ids: string[]) => Promise<readonly ResourceObject<A>[]>,
    serialize: (resource: ResourceObject<A>) => string,
  ): Promise<Buffer> {
    const known = this.pages.get(page.key);
    if (known?.listing === page.listing) return known.body;
    const { items, nextCursor } = page.read();
    const rows = await this.rowsOf(kind, tenantId, items, load, serialize);
    const body = listBody(rows.json, listMeta(page.pageSize, nextCursor));
    // A row changed or gone between the listing and its load makes a page that is not the listing's.
    if (rows.asListed) this.pages.set(page.key, { listing: page.listing, body });
    return body;
  }

  /** The JSON of each listed row, in the page's order (a row gone since it was listed is left out). */
  private async rowsOf<A>(
    kind: string,
    tenantId: string,
    listed: readonly ListedVersion[],
    load: (ids: string[]) => Promise<readonly ResourceObject<A>[]>,
    serialize: (resource: ResourceObject<A>) => string,
  ): Promise<PageRows> {
    const held = listed.map((row) => {
      const rendered = this.rows.get(row.id);
      return rendered?.version === row.version && rendered.tenantId === tenantId && rendered.kind === kind
        ? rendered.json
        : undefined;
    });
    const missing = listed.filter((_, at) => held[at] === undefined);
    if (missing.length === 0) return { json: held as Buffer[], asListed: true };

    const loaded = new Map<string, Rendered>();
    for (const resource of await load(missing.map((row) => row.id))) {
      const rendered = {
        kind,
        tenantId,
        version: resource.meta.version,
        json: Buffer.from(serialize(resource), 'utf8'),
      };
      loaded.set(resource.id, rendered);
      this.rows.set(resource.id, rendered);
    }
    const json: Buffer[] = [];
    let asListed = true;
    listed.forEach((row, at) => {
      const fresh = loaded.get(row.id);
      if (held[at] === undefined && fresh?.version !== row.version) asListed = false;
      const rendered = held[at] ?? fresh?.json;
      if (rendered !== undefined) json.push(rendered);
    });
    return { json, asListed };
  }
}

const DATA_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/** A page in the list's envelope (`ListSchema`) from its rows' JSON: one copy of the rows. */
function listBody(rows: readonly Buffer[], meta: ListMetaValue): Buffer {
  const parts: Buffer[] = [DATA_START];
  rows.forEach((row, at) => {
    if (at > 0) parts.push(COMMA);
    parts.push(row);
  });
  parts.push(Buffer.from(`],"meta":${JSON.stringify(meta)}}`));
  return Buffer.concat(parts);
}

/** Sends a page of a list (`RenderedResources.list`): it goes out as it is, without encoding. */
export function sendRenderedList(reply: FastifyReply, body: Buffer) {
  return reply.type('application/json; charset=utf-8').send(body);
}
