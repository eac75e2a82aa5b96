/**
 * A visit shows its site's current code (clientSiteId, and the siteCode of its assets), so a new code is a
 * change of every visit of the site: each gets a new version (and updatedAt), in the transaction that renames
 * the site, so that its ETag changes with its representation. No event: none is about a visit's fields.
 *
 * That is one write per visit for a PATCH of a few bytes, so a tenant's renames are bounded by the visits they
 * rewrite, not only by the request rate: a client with 100,000 visits on one site cost PostgreSQL about 2 s per
 * rename (and held the embedded database as long, every tenant waiting), 100 times a minute (hostile-tenant
 * probe). Each tenant's rewrites are counted in a sliding minute, per process like the rate limit; a rename is
 * admitted while the minute holds fewer than the limit (so any one site can always be renamed), else it is 429
 * and nothing changes.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { Problem } from '../../http/problem.js';
import type { SlidingWindowLimiter } from '../../http/sliding-window.js';
import type { Clock } from '../../lib/clock.js';
import type { SiteCodeFollower } from '../sites/service.js';
import * as repository from './repository.js';

/** The follower of site renames that moves each visit of the site to a new version, within `rewrites`' limit. */
export function siteCodeFollower(rewrites: SlidingWindowLimiter, clock: Clock): SiteCodeFollower {
  return async (tx: Transaction<Database>, tenantId: string, siteId: string, now: Date) => {
    // Counted under the site's lock (a visit create locks its site too), so the count is what the update
    // rewrites; counted and charged before the update, so that concurrent renames cannot all pass the check.
    const visits = await repository.countVisitsOfSite(tx, tenantId, siteId);
    if (visits === 0) return;
    const decision = rewrites.take(tenantId, clock.now().getTime(), visits);
    if (!decision.allowed) {
      throw new Problem(
        'rate-limit-exceeded',
        `Your client's siteCode changes rewrote ${decision.limit} or more site visits in the last minute (a new ` +
          `siteCode is a new version of each visit of the site; this site has ${visits}). Nothing was changed. ` +
          `Retry after ${decision.resetSeconds} seconds.`,
        { headers: { 'retry-after': String(decision.resetSeconds) } },
      );
    }
    await repository.bumpVisitsOfSite(tx, tenantId, siteId, now);
  };
}
