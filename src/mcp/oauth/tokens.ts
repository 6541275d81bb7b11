import { and, eq, gt, isNull } from "drizzle-orm";
import type { Deps, Principal, Scope } from "../../deps";
import { oauthTokens } from "../../db/schema";
import { AppError } from "../../http/errors";
import { agentRate } from "../../limits/plans";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { getWorkspace, tierOf } from "../../modules/workspaces/repo";

export const OAUTH_ACCESS_PREFIX = "nso_";
export const OAUTH_REFRESH_PREFIX = "nsr_";
export const ACCESS_TTL_MS = 3600_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;
export const OAUTH_SCOPES = ["notes:read", "notes:write"] as const;

/** The requested scope, deduplicated; none means all. Null when it names a scope we do not issue. */
export function normaliseScope(requested: string | undefined): string | null {
  const parts = (requested?.trim() || OAUTH_SCOPES.join(" ")).split(/\s+/);
  if (parts.some((p) => !(OAUTH_SCOPES as readonly string[]).includes(p))) return null;
  return [...new Set(parts)].join(" ");
}

/** OAuth scopes as the token scopes of API.md: notes:write covers create, edit, delete, move and append. */
export function toScopes(scope: string): Set<Scope> {
  const s = new Set<Scope>();
  for (const part of scope.split(" ")) {
    if (part === "notes:read") s.add("read");
    if (part === "notes:write") {
      s.add("write");
      s.add("append");
    }
  }
  return s;
}

export function issueTokens(deps: Deps, grant: { clientId: string; accountId: string; workspaceId: string; scope: string; family?: string }) {
  const now = deps.clock.now();
  const family = grant.family ?? randomBase62(16);
  const access = OAUTH_ACCESS_PREFIX + randomBase62(40);
  const refresh = OAUTH_REFRESH_PREFIX + randomBase62(40);
  const base = { clientId: grant.clientId, accountId: grant.accountId, workspaceId: grant.workspaceId, scope: grant.scope, family, createdAt: now };
  deps.db.insert(oauthTokens).values({ ...base, tokenHash: sha256Hex(access), kind: "access", expiresAt: now + ACCESS_TTL_MS }).run();
  deps.db.insert(oauthTokens).values({ ...base, tokenHash: sha256Hex(refresh), kind: "refresh", expiresAt: now + REFRESH_TTL_MS }).run();
  return { access_token: access, token_type: "Bearer", expires_in: ACCESS_TTL_MS / 1000, refresh_token: refresh, scope: grant.scope };
}

export function findToken(deps: Deps, secret: string, kind: "access" | "refresh") {
  return deps.db
    .select()
    .from(oauthTokens)
    .where(and(eq(oauthTokens.tokenHash, sha256Hex(secret)), eq(oauthTokens.kind, kind)))
    .get();
}

export function revokeFamily(deps: Deps, family: string): void {
  deps.db.update(oauthTokens).set({ revokedAt: deps.clock.now() }).where(and(eq(oauthTokens.family, family), isNull(oauthTokens.revokedAt))).run();
}

/** The principal of an OAuth access token, for /mcp only; 401 when unknown, expired or revoked. */
export function oauthPrincipal(deps: Deps, secret: string): Principal {
  const row = findToken(deps, secret, "access");
  const now = deps.clock.now();
  if (!row || row.revokedAt !== null || row.expiresAt <= now) throw new AppError("unauthorized", "the access token is unknown, expired or revoked");
  const tier = tierOf(deps, getWorkspace(deps, row.workspaceId));
  return {
    tokenId: `oauth_${row.family}`,
    accountId: row.accountId,
    workspaceId: row.workspaceId,
    scopes: toScopes(row.scope),
    noteId: null,
    kind: "api",
    rate: agentRate(deps.config.limitProfile, tier),
    validUntil: row.expiresAt,
  };
}

/** Ends every grant an account gave any client (access and refresh tokens); returns how many were live. */
export function revokeAccountGrants(deps: Deps, accountId: string): number {
  const now = deps.clock.now();
  const unrevoked = and(eq(oauthTokens.accountId, accountId), isNull(oauthTokens.revokedAt));
  const live = deps.db.select({ family: oauthTokens.family }).from(oauthTokens).where(and(unrevoked, gt(oauthTokens.expiresAt, now))).all();
  deps.db.update(oauthTokens).set({ revokedAt: now }).where(unrevoked).run();
  return new Set(live.map((r) => r.family)).size;
}
