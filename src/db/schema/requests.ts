import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { workspaces } from "./accounts";

/**
 * Stored answers to writes that carried an Idempotency-Key, replayed for 24 hours. Keys belong
 * to the token that sent them (as Stripe keys them by API key): another token of the same
 * workspace can neither read a stored answer nor claim a key first.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    tokenId: text("token_id").notNull(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    bodyHash: text("body_hash").notNull(),
    status: integer("status").notNull(),
    responseBody: text("response_body").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.key] }), index("idempotency_expires").on(t.expiresAt)],
);

/** The 4xx answers each workspace got, for GET /api/v1/errors. No bodies, no tokens. */
export const apiErrors = sqliteTable(
  "api_errors",
  {
    id: integer("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    tokenId: text("token_id"),
    at: integer("at").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    status: integer("status").notNull(),
    code: text("code").notNull(),
  },
  (t) => [index("api_errors_workspace").on(t.workspaceId, t.at), index("api_errors_at").on(t.at)],
);

/** Billing deliveries already applied, by SHA-256 of the raw body: a replay changes nothing. */
export const billingEvents = sqliteTable("billing_events", {
  bodyHash: text("body_hash").primaryKey(),
  eventName: text("event_name").notNull(),
  workspaceId: text("workspace_id"),
  receivedAt: integer("received_at").notNull(),
});
