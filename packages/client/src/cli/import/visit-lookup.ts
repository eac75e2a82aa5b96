/**
 * The visit a message row names by the client's own ticket number (`clientTicketNumber`), looked up for the row's
 * create and for its comparison with the message it created (run.ts).
 */
import type { SiteServicesClient } from '../../client.js';
import type { Pacer } from './pace.js';

/** No visit has the row's clientTicketNumber: the row is refused before it is sent. */
export class UnknownTicket extends Error {}

/**
 * A message row may name its visit by the client's own ticket number (`clientTicketNumber`) instead of
 * `siteVisitId`: it is looked up (once per ticket, at the import's pace) and sent as `siteVisitId`, so the
 * body, and what its key stands for, is the same on every run.
 */
export async function withVisitId(
  body: Record<string, unknown>,
  client: SiteServicesClient,
  cache: Map<string, string>,
  pacer: Pacer,
): Promise<Record<string, unknown>> {
  const { clientTicketNumber, ...rest } = body;
  if (typeof clientTicketNumber !== 'string' || 'siteVisitId' in body) return body;
  let visitId = cache.get(clientTicketNumber);
  if (visitId === undefined) {
    await pacer.wait();
    visitId = (await client.siteVisits.findByClientTicketNumber(clientTicketNumber))?.id;
    if (visitId === undefined)
      throw new UnknownTicket(`no site visit has clientTicketNumber ${JSON.stringify(clientTicketNumber)}`);
    cache.set(clientTicketNumber, visitId);
  }
  return { ...rest, siteVisitId: visitId };
}
