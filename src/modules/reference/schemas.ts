/** Reference data: projects and items (SPEC: Reference items), as the operator provisions them. */
import { type Static, Type } from 'typebox';
import { CappedListMeta, ListSchema, ResourceSchema } from '../../http/envelope.js';
import { PageSizeParameter } from '../../http/pagination.js';
import { Nullable, Text } from '../../http/schemas.js';

/** A reference id as SPEC allows it: a non-empty string or a non-negative integer. */
export const ReferenceId = (description: string) =>
  Type.Union([Text(100), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })], { description });

export const ProjectStatus = Type.Union([Type.Literal('Active'), Type.Literal('Inactive')]);

export const ProjectCreateBody = Type.Object(
  {
    projectId: ReferenceId('The project id, as the client will send it in site visits.'),
    projectName: Text(200),
    status: Type.Optional(ProjectStatus),
    upstreamRecordId: Type.Optional(Text(100)),
  },
  { additionalProperties: false },
);
export type ProjectCreate = Static<typeof ProjectCreateBody>;

export const ProjectPatchBody = Type.Object(
  { projectName: Type.Optional(Text(200)), status: Type.Optional(ProjectStatus) },
  { additionalProperties: false },
);
export type ProjectPatch = Static<typeof ProjectPatchBody>;

export const Project = Type.Object(
  {
    projectId: Type.Union([Type.String(), Type.Integer()]),
    projectName: Type.String(),
    status: ProjectStatus,
    upstreamRecordId: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type ProjectValue = Static<typeof Project>;

export const ItemCreateBody = Type.Object(
  {
    itemId: ReferenceId('The item id.'),
    itemName: Text(200, { description: 'Unique per tenant; site visits refer to items by this name.' }),
    upstreamRecordId: Type.Optional(Text(100)),
  },
  { additionalProperties: false },
);
export type ItemCreate = Static<typeof ItemCreateBody>;

export const Item = Type.Object(
  {
    itemId: Type.Union([Type.String(), Type.Integer()]),
    itemName: Type.String(),
    upstreamRecordId: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type ItemValue = Static<typeof Item>;

export const ProjectParams = Type.Object(
  { tenantId: Type.String({ maxLength: 100 }), projectId: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

/** Reference meta: the upstream record id when known (SPEC: Reference items), never a version. */
export const ReferenceMeta = Type.Object(
  {
    upstreamRecordId: Type.Optional(
      Type.String({ description: "The record id in the operator's upstream system, when known." }),
    ),
  },
  { additionalProperties: false },
);

export const ProjectResource = ResourceSchema(
  'projects',
  Type.Object(
    {
      projectId: Type.Union([Type.Integer(), Type.String()], { description: "Send this as a site visit's projectId." }),
      projectName: Type.String(),
      status: Type.Literal('Active'),
    },
    { additionalProperties: false },
  ),
  { meta: ReferenceMeta, title: 'Project' },
);

export const ItemResource = ResourceSchema(
  'items',
  Type.Object(
    {
      itemId: Type.Union([Type.Integer(), Type.String()]),
      itemName: Type.String({ description: "Send this as a site visit's itemName." }),
    },
    { additionalProperties: false },
  ),
  { meta: ReferenceMeta, title: 'Item' },
);

export const ProjectList = ListSchema(ProjectResource, CappedListMeta);
export const ItemList = ListSchema(ItemResource, CappedListMeta);

/** Capped lookups: page[size] only; page[after] and anything else is 422. */
export const ReferenceListQuery = Type.Object(
  { 'page[size]': Type.Optional(PageSizeParameter) },
  { additionalProperties: false },
);
