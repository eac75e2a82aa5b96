/**
 * The references (project, site, item) that visit creates of this process found for each tenant, so that
 * a create naming the same ones need not read them before its statement: the statement checks them
 * instead (the insert's guard, `visitReferencesGuard`), and a create whose references no longer hold is
 * made the transactional way, which forgets them (the next create reads them afresh).
 *
 * Nothing here is trusted: an entry only lets a create skip a read whose result its own statement
 * re-checks, under the tenant's id. Bounded (two generations of at most `ENTRIES` each).
 */
import { TwoGenerationCache } from '../../lib/two-generation-cache.js';
import type { NamedReferences } from './references-repository.js';

/** Entries per generation: a tenant's sites, projects and items as visits name them (about 200 bytes each). */
const ENTRIES = 20_000;

/** How a create names its references: the project's id as text, the site's code, the item's name. */
export interface ReferenceNames {
  projectId: string;
  siteCode: string;
  itemName: string;
}

type Kind = 'project' | 'site' | 'item';

export class KnownReferences {
  private readonly found = new TwoGenerationCache<string, NamedReferences[Kind]>(ENTRIES);

  /** The references of `names`, when all three were found before. */
  get(tenantId: string, names: ReferenceNames): NamedReferences | undefined {
    const project = this.found.get(keyOf(tenantId, 'project', names.projectId));
    const site = this.found.get(keyOf(tenantId, 'site', names.siteCode));
    const item = this.found.get(keyOf(tenantId, 'item', names.itemName));
    if (!project || !site || !item) return undefined;
    return {
      project: project as NamedReferences['project'],
      site: site as NamedReferences['site'],
      item: item as NamedReferences['item'],
    };
  }

  remember(tenantId: string, names: ReferenceNames, references: NamedReferences): void {
    this.found.set(keyOf(tenantId, 'project', names.projectId), references.project);
    this.found.set(keyOf(tenantId, 'site', names.siteCode), references.site);
    this.found.set(keyOf(tenantId, 'item', names.itemName), references.item);
  }

  forget(tenantId: string, names: ReferenceNames): void {
    this.found.delete(keyOf(tenantId, 'project', names.projectId));
    this.found.delete(keyOf(tenantId, 'site', names.siteCode));
    this.found.delete(keyOf(tenantId, 'item', names.itemName));
  }
}

function keyOf(tenantId: string, kind: Kind, name: string): string {
  return `${tenantId}\u0000${kind}\u0000${name}`;
}
