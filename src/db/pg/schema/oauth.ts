import { index, pgTable, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { ms } from "./types";

// The PostgreSQL twin of src/db/schema/oauth.ts.

export const oauthClients = pgTable("oauth_clients", {
  clientId: text("client_id").primaryKey(),
  clientName: text("client_name").notNull(),
  // JSON as text, as in SQLite.
  redirectUris: text("redirect_uris").notNull(),
  metadata: text("metadata").notNull(),
  createdAt: ms("created_at").notNull(),
  documentFetchedAt: ms("document_fetched_at"),
});

export const oauthCodes = pgTable("oauth_codes", {
  codeHash: text("code_hash").primaryKey(),
  clientId: text("client_id").notNull().references(() => oauthClients.clientId, { onDelete: "cascade" }),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  workspaceId: text("workspace_id").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  codeChallenge: text("code_challenge").notNull(),
  scope: text("scope").notNull(),
  resource: text("resource"),
  expiresAt: ms("expires_at").notNull(),
  usedAt: ms("used_at"),
});

export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    kind: text("kind", { enum: ["access", "refresh"] }).notNull(),
    clientId: text("client_id").notNull().references(() => oauthClients.clientId, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    scope: text("scope").notNull(),
    family: text("family").notNull(),
    expiresAt: ms("expires_at").notNull(),
    revokedAt: ms("revoked_at"),
    createdAt: ms("created_at").notNull(),
    lastUsedAt: ms("last_used_at"),
    successor: text("successor"),
  },
  (t) => [index("oauth_tokens_family").on(t.family), index("oauth_tokens_account").on(t.accountId)],
);
