/** GET /health (the process answers) and GET /ready (the database answers), outside /api/v1, no auth. */
import { Type } from 'typebox';
import { sql } from 'kysely';
import type { AppContext } from '../app-context.js';
import { Problem } from './problem.js';
import type { Api } from './types.js';

const Status = Type.Object({ status: Type.String() });

export function registerOperationsRoutes(app: Api, ctx: AppContext): void {
  app.get('/health', { schema: { hide: true, response: { 200: Status } } }, async () => ({ status: 'ok' }));
  app.get('/ready', { schema: { hide: true, response: { 200: Status } } }, async () => {
    try {
      await sql`select 1`.execute(ctx.db);
    } catch {
      throw new Problem('service-unavailable', 'The database is not reachable.', { headers: { 'retry-after': '5' } });
    }
    return { status: 'ready' };
  });
}
