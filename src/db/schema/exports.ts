import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, workspaces } from "./accounts";

/** Full-account exports: built by a job into a zip under <data dir>/exports, downloadable for 24 hours. */
export const exportsTable = sqliteTable(
  "exports",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    status: text("status", { enum: ["queued", "building", "ready", "failed", "expired"] }).notNull().default("queued"),
    filePath: text("file_path"),
    sizeBytes: integer("size_bytes"),
    notes: integer("notes"),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
    completedAt: integer("completed_at"),
    expiresAt: integer("expires_at"),
  },
  (t) => [index("exports_account").on(t.accountId, t.createdAt), index("exports_expiry").on(t.status, t.expiresAt)],
);
