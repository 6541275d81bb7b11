import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";
import { ms, rowId } from "./types";

// The PostgreSQL twin of src/db/schema/requests.ts.

export const idempotencyKeys = pgTable(
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
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.key] }), index("idempotency_expires").on(t.expiresAt)],
);

export const apiErrors = pgTable(
  "api_errors",
  {
    id: rowId("id"),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    tokenId: text("token_id"),
    at: ms("at").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    status: integer("status").notNull(),
    code: text("code").notNull(),
  },
  (t) => [index("api_errors_workspace").on(t.workspaceId, t.at), index("api_errors_at").on(t.at)],
);

export const billingEvents = pgTable("billing_events", {
  bodyHash: text("body_hash").primaryKey(),
  eventName: text("event_name").notNull(),
  workspaceId: text("workspace_id"),
  receivedAt: ms("received_at").notNull(),
});
