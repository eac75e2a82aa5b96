/** Provisioning and reading reference data. */
import type { Kysely, Transaction } from 'kysely';
import type { Database, ItemRow, ProjectRow } from '../../db/schema.js';
import { suppliedColumns } from '../../db/column-changes.js';
import { refusingDuplicate } from '../../db/errors.js';
import { DuplicateResource } from '../../http/duplicate-resource.js';
import { notFound, Problem } from '../../http/problem.js';
import { valueOrWhy } from '../../http/request-names.js';
import * as repository from './repository.js';
import type { ItemCreate, ItemValue, ProjectCreate, ProjectPatch, ProjectValue } from './schemas.js';

/** The types of the client API's reference resources (its `type` member). */
export const PROJECT_TYPE = 'projects';
export const ITEM_TYPE = 'items';

/** A reference id as stored (text) and as served (an integer when it was given as one). */
export function referenceIdText(id: string | number): string {
  return String(id);
}

function servedId(text: string, isInteger: boolean): string | number {
  return isInteger ? Number(text) : text;
}

export function toProject(row: ProjectRow): ProjectValue {
  return {
    projectId: servedId(row.project_id, row.project_id_is_integer),
    projectName: row.project_name,
    status: row.status,
    upstreamRecordId: row.upstream_record_id,
  };
}

export function toItem(row: ItemRow): ItemValue {
  return {
    itemId: servedId(row.item_id, row.item_id_is_integer),
    itemName: row.item_name,
    upstreamRecordId: row.upstream_record_id,
  };
}

export async function createProject(
  db: Kysely<Database>,
  tenantId: string,
  input: ProjectCreate,
  now: Date,
): Promise<ProjectValue> {
  const row = await refusingDuplicate(
    () =>
      repository.insertProject(db, {
        tenantId,
        projectId: referenceIdText(input.projectId),
        isInteger: typeof input.projectId === 'number',
        projectName: input.projectName,
        status: input.status ?? 'Active',
        upstreamRecordId: input.upstreamRecordId ?? null,
        now,
      }),
    // The tenant's one unique value of a project is its id: the project that has it is the one named.
    () =>
      new DuplicateResource(`Project ${shownReferenceId(input.projectId)} already exists for this tenant.`, {
        type: PROJECT_TYPE,
        id: referenceIdText(input.projectId),
      }),
  );
  return toProject(row);
}

export async function patchProject(
  db: Kysely<Database>,
  tenantId: string,
  projectId: string,
  patch: ProjectPatch,
  now: Date,
): Promise<ProjectValue> {
  const row = await repository.updateProject(db, tenantId, projectId, {
    ...suppliedColumns<ProjectPatch, ProjectRow>({ projectName: 'project_name', status: 'status' }, patch),
    updated_at: now,
  });
  if (!row) throw notFound('Project');
  return toProject(row);
}

export async function createItem(
  db: Kysely<Database>,
  tenantId: string,
  input: ItemCreate,
  now: Date,
): Promise<ItemValue> {
  const row = await refusingDuplicate(
    () =>
      repository.insertItem(db, {
        tenantId,
        itemId: referenceIdText(input.itemId),
        isInteger: typeof input.itemId === 'number',
        itemName: input.itemName,
        upstreamRecordId: input.upstreamRecordId ?? null,
        now,
      }),
    () =>
      new DuplicateResource(
        `An item with itemId ${shownReferenceId(input.itemId)} or itemName ${valueOrWhy(input.itemName, 'as sent', true)} already exists for this tenant.`,
        async (db) => {
          const item =
            (await repository.findItem(db, tenantId, referenceIdText(input.itemId))) ??
            (await repository.findItemByName(db, tenantId, input.itemName));
          return item && { type: ITEM_TYPE, id: item.item_id };
        },
      ),
  );
  return toItem(row);
}

/** A reference id of the request as a problem repeats it: a number as it is, a string by the names' rule. */
function shownReferenceId(id: string | number): string {
  return typeof id === 'number' ? String(id) : valueOrWhy(id, 'as sent', true);
}

/** The tenant's Active project a site visit names (409 invalid-project when unknown, foreign or not Active). */
export async function resolveProject(
  tx: Transaction<Database>,
  tenantId: string,
  projectId: string | number,
): Promise<ProjectRow> {
  return activeProject(projectId, await repository.findProject(tx, tenantId, referenceIdText(projectId)));
}

/** `project`, the tenant's row for `projectId` if any, when it is Active; 409 invalid-project otherwise. */
export function activeProject<P extends { status: string }>(projectId: string | number, project: P | undefined): P {
  if (project?.status !== 'Active') {
    throw new Problem(
      'invalid-project',
      project
        ? `Project ${shownReferenceId(projectId)} is not Active. GET /api/v1/projects lists the projects you can use.`
        : `Project ${shownReferenceId(projectId)} is not one of your projects. GET /api/v1/projects lists the projects you can use.`,
      { errors: { projectId: [project ? 'is not an Active project' : 'is not one of your projects'] } },
    );
  }
  return project;
}

/** The tenant's item a site visit names by its name (404 otherwise). */
export async function resolveItem(tx: Transaction<Database>, tenantId: string, itemName: string): Promise<ItemRow> {
  return namedItem(itemName, await repository.findItemByName(tx, tenantId, itemName));
}

/** `item`, the tenant's item named `itemName` if any; 404 when there is none. */
export function namedItem<I>(itemName: string, item: I | undefined): I {
  if (!item) throw notFound(`Item ${valueOrWhy(itemName, 'named as sent', true)}`);
  return item;
}
