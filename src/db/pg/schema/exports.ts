import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { accounts, workspaces } from "./accounts";
import { byteCount, bytea, ms } from "./types";

// The PostgreSQL twin of src/db/schema/exports.ts.

export const exportsTable = pgTable(
  "exports",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    status: text("status", { enum: ["queued", "building", "ready", "failed", "expired"] }).notNull().default("queued"),
    filePath: text("file_path"),
    sizeBytes: byteCount("size_bytes"),
    notes: integer("notes"),
    error: text("error"),
    createdAt: ms("created_at").notNull(),
    completedAt: ms("completed_at"),
    expiresAt: ms("expires_at"),
  },
  (t) => [index("exports_account").on(t.accountId, t.createdAt), index("exports_expiry").on(t.status, t.expiresAt)],
);

export const exportFiles = pgTable(
  "export_files",
  {
    exportId: text("export_id").notNull().references(() => exportsTable.id, { onDelete: "cascade" }),
    part: integer("part").notNull(),
    data: bytea("data").notNull(),
  },
  (t) => [primaryKey({ columns: [t.exportId, t.part] })],
);
