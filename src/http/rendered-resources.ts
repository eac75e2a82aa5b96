/**
 * A list page reads which rows it holds and at which versions, and renders only what it has not rendered
 * before; a GET by id of a resource rendered before reads only its version (`one`).
 *
 * A resource's representation is a function of its version: every change of the resource, a new version of
 * one of its files included, raises `meta.version` by one (SPEC). So the JSON of a tenant's (type, id,
 * version), once rendered, is that version's JSON for good, and a page needs from the database only the
 * rows' ids and versions; the rows missing here are read in full (a read per chunk of the page, up to where
 * it stops at `PAGE_BYTES`: page-body.ts) and rendered by the route's compiled serialiser. A list of 100 rows then costs PostgreSQL and the driver three columns per row
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
 *
 * Lists and GETs by id share the rendered rows: a row a page rendered answers a GET of it, and the other way
 * round. Only resources whose representation is made of their own row (and their files) qualify: a site
 * visit shows its assets to some callers only (by scope), so visits are rendered each time.
 */
import type { FastifyReply } from 'fastify';
import type { ListedVersion } from '../db/listing.js';
import { TwoGenerationCache } from '../lib/two-generation-cache.js';
import { etagOf, type ResourceObject } from './envelope.js';
import { chunkedPageBody, type PageEnd, type RenderedRow } from './page-body.js';
import { type ListingPage, listMeta } from './pagination.js';

/** What a page's entry costs beside its JSON and its key: the map's entry, the objects, the Buffer's own (about 250 measured). */
const PAGE_ENTRY_BYTES = 300;

/** The rendered JSON of one version of one resource, and whose it is. */
export interface RenderedResource {
  kind: string;
  tenantId: string;
  version: number;
  /** The resource's JSON in the single envelope, `{"data":...}`: a GET's whole answer. */
  document: Buffer;
  /** The resource's JSON alone, a list's row: a view into `document`, not a copy. */
  json: Buffer;
}

/** A page's answer, and the listing it answers. */
interface RenderedPage {
  listing: string;
  body: Buffer;
}

/** The rows of a page at their places (undefined: gone), and whether they are exactly the rows listed at the versions listed. */
interface PageRows {
  rows: (RenderedRow | undefined)[];
  asListed: boolean;
}

export class RenderedResources {
  /**
   * By resource id (ids are unique across kinds and tenants; the entry says whose it is), the latest version
   * rendered replacing an older one; a quarter of the capacity per generation.
   */
  private readonly rows: TwoGenerationCache<string, RenderedResource>;
  /** By page key (`ListingPage.key`), the last answer; a quarter of the capacity per generation. */
  private readonly pages: TwoGenerationCache<string, RenderedPage>;

  /** @param capacity bytes kept at most, half rows and half pages; 0 keeps nothing */
  constructor(capacity: number) {
    // A row's key is an id of ours and its JSON some hundreds of bytes at least: weighed by its JSON.
    this.rows = new TwoGenerationCache(capacity / 4, (rendered) => rendered.document.length);
    // A page's key is the caller's query (filters of 100 characters, a cursor): weighed with it, or empty
    // pages asked with ever new filters weighed 34 bytes and cost some 420 (hostile-tenant probe).
    this.pages = new TwoGenerationCache(
      capacity / 4,
      (page, key) => page.body.length + page.listing.length + key.length + PAGE_ENTRY_BYTES,
    );
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
    // A row changed or gone between the listing and its load makes a page that is not the listing's. The rows
    // past the cut, never loaded, make no difference to the answer: the same listing makes the same one.
    let asListed = true;
    const body = await chunkedPageBody(
      items,
      async (chunk) => {
        const rows = await this.rowsOf(kind, tenantId, chunk, load, serialize);
        asListed &&= rows.asListed;
        return rows.rows;
      },
      listPageEnd({ ...page, nextCursor }),
    );
    if (asListed) this.pages.set(page.key, { listing: page.listing, body });
    return body;
  }

  /**
   * The JSON of one resource, for a GET by id: the JSON rendered before when the resource is still at the
   * version it was rendered at, which costs the database one small row (its version) instead of the whole
   * resource, and the service no parsing or serialising. A resource this process holds no JSON of is loaded
   * at once, in the one read a GET would make anyway; only one that changed since it was rendered here
   * costs a read more (its version, then the resource).
   * @param versionOf the tenant's resource's version, read now (it throws the 404 when there is none)
   * @param load the tenant's resource (it throws the 404 when there is none)
   * @param serialize a resource's JSON by the response's compiled serialiser (`serializeResource`)
   */
  async one<A>(
    kind: string,
    tenantId: string,
    id: string,
    versionOf: () => Promise<number>,
    load: () => Promise<ResourceObject<A>>,
    serialize: (resource: ResourceObject<A>) => string,
  ): Promise<RenderedResource> {
    const held = this.heldFor(kind, tenantId, id);
    if (held !== undefined && (await versionOf()) === held.version) return held;
    return this.keep(kind, tenantId, await load(), serialize);
  }

  /** The JSON held for this id, if it is of this kind and tenant (any version). */
  private heldFor(kind: string, tenantId: string, id: string): RenderedResource | undefined {
    const rendered = this.rows.get(id);
    return rendered?.tenantId === tenantId && rendered.kind === kind ? rendered : undefined;
  }

  /**
   * Renders the resource and keeps its JSON for its version: for what `one` and `list` load, and for a
   * resource a request has just changed (a PATCH's answer), so that the next GET of it reads its version only.
   */
  keep<A>(
    kind: string,
    tenantId: string,
    resource: ResourceObject<A>,
    serialize: (resource: ResourceObject<A>) => string,
  ): RenderedResource {
    const document = Buffer.from(`${DOCUMENT_START}${serialize(resource)}${DOCUMENT_END}`, 'utf8');
    const json = document.subarray(DOCUMENT_START.length, document.length - DOCUMENT_END.length);
    const rendered = { kind, tenantId, version: resource.meta.version, document, json };
    this.rows.set(resource.id, rendered);
    return rendered;
  }

  /** The JSON of each listed row at its place, undefined for a row gone since it was listed. */
  private async rowsOf<A>(
    kind: string,
    tenantId: string,
    listed: readonly ListedVersion[],
    load: (ids: string[]) => Promise<readonly ResourceObject<A>[]>,
    serialize: (resource: ResourceObject<A>) => string,
  ): Promise<PageRows> {
    const held = listed.map((row) => {
      const rendered = this.heldFor(kind, tenantId, row.id);
      return rendered?.version === row.version ? rendered.json : undefined;
    });
    const missing = listed.filter((_, at) => held[at] === undefined);
    if (missing.length === 0)
      return { rows: listed.map((row, at) => ({ json: held[at]!, seq: row.seq })), asListed: true };

    const loaded = new Map<string, RenderedResource>();
    for (const resource of await load(missing.map((row) => row.id))) {
      loaded.set(resource.id, this.keep(kind, tenantId, resource, serialize));
    }
    let asListed = true;
    const rows = listed.map((row, at) => {
      const fresh = loaded.get(row.id);
      if (held[at] === undefined && fresh?.version !== row.version) asListed = false;
      const rendered = held[at] ?? fresh?.json;
      return rendered === undefined ? undefined : { json: rendered, seq: row.seq };
    });
    return { rows, asListed };
  }
}

/** The single envelope around a resource's JSON (`SingleSchema`); ASCII, so its length in bytes too. */
const DOCUMENT_START = '{"data":';
const DOCUMENT_END = '}';

/** What a page's answer says beside its rows: the size asked, the next cursor, and how to make one. */
interface PageOf {
  pageSize: number;
  nextCursor: string | undefined;
  cursorAfter(position: number): string;
}

/**
 * How a client list's page ends (`chunkedPageBody`): its size and next cursor, or when its rows stopped at
 * `PAGE_BYTES`, the cursor after the last row sent in place of the page's own.
 */
export function listPageEnd(page: PageOf): PageEnd {
  return {
    whole: () => listMeta(page.pageSize, page.nextCursor),
    cut: (lastSeq) => listMeta(page.pageSize, page.cursorAfter(lastSeq)),
  };
}

/** Sends a page of a list (`RenderedResources.list`): it goes out as it is, without encoding. */
export function sendRenderedList(reply: FastifyReply, body: Buffer) {
  return reply.type('application/json; charset=utf-8').send(body);
}

/** Sends one resource as rendered (`RenderedResources.one`), in the single envelope, with its ETag. */
export function sendRenderedResource(reply: FastifyReply, rendered: RenderedResource) {
  return reply.header('etag', etagOf(rendered.version)).type('application/json; charset=utf-8').send(rendered.document);
}
