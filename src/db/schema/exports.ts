import { blob, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
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

/**
 * A finished export's zip in 1 MB parts, for PostgreSQL, where several instances share the
 * database and the one that serves the download need not be the one that built it. On SQLite
 * (one process, the file under <data dir>/exports) nothing writes here.
 */
export const exportFiles = sqliteTable(
  "export_files",
  {
    exportId: text("export_id").notNull().references(() => exportsTable.id, { onDelete: "cascade" }),
    part: integer("part").notNull(),
    data: blob("data", { mode: "buffer" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.exportId, t.part] })],
);
