import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** OAuth clients registered dynamically (RFC 7591): public clients, PKCE only. */
export const oauthClients = sqliteTable("oauth_clients", {
  clientId: text("client_id").primaryKey(),
  clientName: text("client_name").notNull(),
  redirectUris: text("redirect_uris").notNull(),
  metadata: text("metadata").notNull(),
  createdAt: integer("created_at").notNull(),
  // Clients known by their metadata document (client_id is its URL): when it was last fetched.
  documentFetchedAt: integer("document_fetched_at"),
});

/** Authorization codes: one use, ten minutes, bound to the PKCE challenge and redirect URI. */
export const oauthCodes = sqliteTable("oauth_codes", {
  codeHash: text("code_hash").primaryKey(),
  clientId: text("client_id").notNull().references(() => oauthClients.clientId, { onDelete: "cascade" }),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  workspaceId: text("workspace_id").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  codeChallenge: text("code_challenge").notNull(),
  scope: text("scope").notNull(),
  // The resource (RFC 8707) the authorization request named, which the exchange must not change.
  resource: text("resource"),
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
});

/** Access tokens (short-lived) and refresh tokens (rotating), stored as SHA-256. */
export const oauthTokens = sqliteTable(
  "oauth_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    kind: text("kind", { enum: ["access", "refresh"] }).notNull(),
    clientId: text("client_id").notNull().references(() => oauthClients.clientId, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    scope: text("scope").notNull(),
    // One grant's tokens share a family: reusing a rotated refresh token revokes them all.
    family: text("family").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    createdAt: integer("created_at").notNull(),
    // Access tokens: when one last reached /mcp (at most once a minute); refresh tokens: when used.
    lastUsedAt: integer("last_used_at"),
    // A rotated refresh token: the pair it was rotated into, encrypted with a key only the old
    // token's holder can derive, so a concurrent refresh within the grace window gets the same pair.
    successor: text("successor"),
  },
  (t) => [index("oauth_tokens_family").on(t.family), index("oauth_tokens_account").on(t.accountId)],
);
