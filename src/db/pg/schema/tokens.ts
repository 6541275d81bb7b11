import { index, pgTable, text } from "drizzle-orm/pg-core";
import { accounts, workspaces } from "./accounts";
import { ms } from "./types";

// The PostgreSQL twin of src/db/schema/tokens.ts.

export const tokens = pgTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    scopes: text("scopes").notNull(),
    noteId: text("note_id"),
    kind: text("kind", { enum: ["api", "extension"] }).notNull().default("api"),
    expiresAt: ms("expires_at").notNull(),
    revokedAt: ms("revoked_at"),
    lastUsedAt: ms("last_used_at"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("tokens_workspace").on(t.workspaceId)],
);
