import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/** Tenants and their credentials, reference data, sites with their assets, and idempotency keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create table server_secrets (
      name text primary key,
      value text not null,
      created_at timestamptz not null default now()
    );

    create table tenants (
      id text primary key,
      name text not null,
      scopes text[] not null,
      api_enabled boolean not null default true,
      webhook_access boolean not null default true,
      seq bigint generated always as identity,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index tenants_seq on tenants (seq);

    create table client_credentials (
      client_id text primary key,
      tenant_id text not null references tenants (id),
      secret_hash text not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz
    );
    create index client_credentials_tenant on client_credentials (tenant_id);

    create table projects (
      tenant_id text not null references tenants (id),
      project_id text not null,
      project_id_is_integer boolean not null,
      project_name text not null,
      status text not null check (status in ('Active', 'Inactive')),
      upstream_record_id text,
      seq bigint generated always as identity,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, project_id)
    );
    create index projects_tenant_seq on projects (tenant_id, seq);

    create table items (
      tenant_id text not null references tenants (id),
      item_id text not null,
      item_id_is_integer boolean not null,
      item_name text not null,
      upstream_record_id text,
      seq bigint generated always as identity,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, item_id),
      unique (tenant_id, item_name)
    );
    create index items_tenant_seq on items (tenant_id, seq);

    create table sites (
      id text primary key,
      tenant_id text not null references tenants (id),
      seq bigint generated always as identity,
      site_code text not null,
      name text not null,
      address_line1 text not null,
      address_line2 text,
      city text not null,
      state_region text not null,
      postal_code text not null,
      country text not null,
      unique_id text,
      unique_id2 text,
      friendly_location_name text,
      friendly_location_name2 text,
      key_required boolean,
      status text not null,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint sites_tenant_site_code unique (tenant_id, site_code)
    );
    create index sites_tenant_seq on sites (tenant_id, seq);
    create index sites_tenant_unique_id on sites (tenant_id, unique_id, seq) where unique_id is not null;
    create index sites_tenant_unique_id2 on sites (tenant_id, unique_id2, seq) where unique_id2 is not null;

    create table site_assets (
      id integer primary key,
      tenant_id text not null references tenants (id),
      site_id text not null references sites (id),
      unique_id text not null,
      friendly_location text not null,
      asset_status text not null,
      asset_display text not null,
      seq bigint generated always as identity,
      created_at timestamptz not null default now()
    );
    create index site_assets_site on site_assets (site_id, seq);

    create table idempotency_keys (
      tenant_id text not null,
      resource_type text not null,
      key text not null,
      request_hash text not null,
      resource_id text not null,
      response_status integer not null,
      response_body jsonb not null,
      response_etag text,
      completed_at timestamptz not null,
      expires_at timestamptz not null,
      primary key (tenant_id, resource_type, key)
    );
    create index idempotency_keys_expiry on idempotency_keys (expires_at);
  `,
  );
}
