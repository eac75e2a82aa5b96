/**
 * The shapes of the OpenAPI documents (openapi.ts builds them, openapi-operations.ts describes each route in
 * them) and of what the two documents' callers define.
 */
import type { ComponentDefinitions } from './components.js';

/** A JSON object of the document (OpenAPI objects are open-ended; the tests check their shape). */
// biome-ignore lint/suspicious/noExplicitAny: the generated document is walked as loose JSON.
export type JsonObject = Record<string, any>;

export interface OpenApiDocument extends JsonObject {
  openapi: string;
  info: JsonObject;
  servers: JsonObject[];
  paths: Record<string, Record<string, JsonObject>>;
  components: JsonObject;
}

/** What differs between the two documents; the texts come from the caller (openapi-description.ts). */
export interface DocumentDefinition {
  /** Only routes under this prefix belong to the document. */
  prefix: string;
  info: JsonObject;
  securitySchemes: JsonObject;
  /** Tags in display order, with descriptions; tags used by routes but not listed are appended. */
  tags: { name: string; description?: string }[];
  /** Requirement applied to operations that declare none. */
  security?: JsonObject[];
  /**
   * The resources and shared shapes named in components.schemas (components.ts); routes' bodies and
   * responses refer to them. Unused ones are left out of the document.
   */
  components: ComponentDefinitions;
  /** Top-level `webhooks` map (OpenAPI 3.1); its bodies refer to named components. */
  webhooks?: JsonObject;
  /** Members merged into named component schemas (e.g. the Problem schema's list of types). */
  schemaAnnotations?: Record<string, JsonObject>;
  /** Counted by the client rate limit: every operation may answer 429. */
  rateLimited: boolean;
  /** REQUEST_TIMEOUT_MS: every operation may answer 408 after it (openapi-operations.ts, PARSER_STATUSES). */
  requestTimeoutMs: number;
}

export interface OpenApiDefinitions {
  client: DocumentDefinition;
  operator: DocumentDefinition;
}
