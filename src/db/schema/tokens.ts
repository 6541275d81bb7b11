import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, workspaces } from "./accounts";

/** API tokens: only the SHA-256 of the secret is stored. */
export const tokens = sqliteTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    // Comma-separated subset of read, write, append.
    scopes: text("scopes").notNull(),
    // Pinned note: the token sees no other note. Not a foreign key, so deleting the note leaves a token that sees nothing.
    noteId: text("note_id"),
    kind: text("kind", { enum: ["api", "extension"] }).notNull().default("api"),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("tokens_workspace").on(t.workspaceId)],
);
