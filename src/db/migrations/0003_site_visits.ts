import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Site visits with their assigned site assets, and stored files: blobs kept as chunks, and the versions
 * that point owners (a visit's return label, later a message's attachment) at them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create table site_visits (
      id text primary key,
      tenant_id text not null references tenants (id),
      seq bigint generated always as identity,
      site_id text not null references sites (id),
      client_ticket_number text,
      description text not null,
      service_type text not null,
      job_instructions text not null,
      project_id text not null,
      item_id text not null,
      start_date timestamptz not null,
      due_date timestamptz not null,
      are_parts_required boolean not null,
      tracking_number text,
      parts_return_required boolean,
      scheduling_rule text not null,
      status text not null,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      foreign key (tenant_id, project_id) references projects (tenant_id, project_id),
      foreign key (tenant_id, item_id) references items (tenant_id, item_id)
    );
    create index site_visits_tenant_seq on site_visits (tenant_id, seq);
    create unique index site_visits_tenant_ticket on site_visits (tenant_id, client_ticket_number) where client_ticket_number is not null;
    create index site_visits_site on site_visits (site_id);

    create table site_visit_assets (
      id integer primary key,
      tenant_id text not null references tenants (id),
      visit_id text not null references site_visits (id),
      site_asset_id integer not null references site_assets (id),
      seq bigint generated always as identity,
      created_at timestamptz not null default now(),
      constraint site_visit_assets_visit_asset unique (visit_id, site_asset_id)
    );
    create index site_visit_assets_visit_seq on site_visit_assets (visit_id, seq);
    create index site_visit_assets_site_asset on site_visit_assets (site_asset_id);

    create table file_blobs (
      id text primary key,
      tenant_id text not null references tenants (id),
      created_at timestamptz not null default now()
    );
    create index file_blobs_created on file_blobs (created_at);

    create table file_chunks (
      blob_id text not null references file_blobs (id) on delete cascade,
      ordinal integer not null,
      data bytea not null,
      primary key (blob_id, ordinal)
    );
    alter table file_chunks alter column data set storage external;

    create table file_versions (
      tenant_id text not null references tenants (id),
      owner_type text not null,
      owner_id text not null,
      version integer not null,
      blob_id text not null references file_blobs (id),
      file_name text not null,
      content_type text not null,
      size_bytes bigint not null,
      uploaded_at timestamptz not null,
      primary key (tenant_id, owner_type, owner_id, version)
    );
    create index file_versions_blob on file_versions (blob_id);
  `,
  );
}
