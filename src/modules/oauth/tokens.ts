import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { and, eq, gt, isNull } from "drizzle-orm";
import type { Deps } from "../../deps";
import type { Principal } from "../../principal";
import { oauthTokens } from "../../db/tables";
import { AppError } from "../../http/errors";
import { agentRate } from "../../limits/plans";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { toScopes } from "./scopes";

export const OAUTH_ACCESS_PREFIX = "nso_";
export const OAUTH_REFRESH_PREFIX = "nsr_";
export const ACCESS_TTL_MS = 3600_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;
/** How long a just-rotated refresh token still returns the pair it was rotated into (concurrent refreshes). */
export const REFRESH_GRACE_MS = 30_000;

export type TokenAnswer = Awaited<ReturnType<typeof issueTokens>>;
type TokenRow = typeof oauthTokens.$inferSelect;

export async function issueTokens(deps: Deps, grant: { clientId: string; accountId: string; workspaceId: string; scope: string; family?: string }) {
  const now = deps.clock.now();
  const family = grant.family ?? randomBase62(16);
  const access = OAUTH_ACCESS_PREFIX + randomBase62(40);
  const refresh = OAUTH_REFRESH_PREFIX + randomBase62(40);
  const base = { clientId: grant.clientId, accountId: grant.accountId, workspaceId: grant.workspaceId, scope: grant.scope, family, createdAt: now };
  await deps.db.insert(oauthTokens).values({ ...base, tokenHash: sha256Hex(access), kind: "access", expiresAt: now + ACCESS_TTL_MS });
  await deps.db.insert(oauthTokens).values({ ...base, tokenHash: sha256Hex(refresh), kind: "refresh", expiresAt: now + REFRESH_TTL_MS });
  return { access_token: access, token_type: "Bearer", expires_in: ACCESS_TTL_MS / 1000, refresh_token: refresh, scope: grant.scope };
}

export async function findToken(deps: Deps, secret: string, kind: "access" | "refresh"): Promise<TokenRow | undefined> {
  const [row] = await deps.db
    .select()
    .from(oauthTokens)
    .where(and(eq(oauthTokens.tokenHash, sha256Hex(secret)), eq(oauthTokens.kind, kind)));
  return row;
}

export async function revokeFamily(deps: Deps, family: string): Promise<void> {
  await deps.db.update(oauthTokens).set({ revokedAt: deps.clock.now() }).where(and(eq(oauthTokens.family, family), isNull(oauthTokens.revokedAt)));
}

// The pair a refresh token was rotated into is kept encrypted under a key derived from the old
// refresh token itself: the database alone (a backup, a leak) cannot open it, only whoever still
// holds the old token, who could have refreshed with it a moment earlier anyway.
function successorKey(oldSecret: string): Buffer {
  return createHash("sha256").update(`notestream refresh successor\0${oldSecret}`).digest();
}

function sealPair(oldSecret: string, pair: { access_token: string; refresh_token: string }): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", successorKey(oldSecret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify([pair.access_token, pair.refresh_token]), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

function openPair(oldSecret: string, sealed: string): [string, string] | null {
  try {
    const raw = Buffer.from(sealed, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", successorKey(oldSecret), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")) as [string, string];
  } catch {
    return null;
  }
}

/**
 * Rotation: the old refresh token and the grant's access tokens end, a new pair continues the
 * grant, and the old token remembers that pair for REFRESH_GRACE_MS. Inside the writer.
 */
export async function rotateRefresh(deps: Deps, old: TokenRow, oldSecret: string, scope: string): Promise<TokenAnswer> {
  await revokeFamily(deps, old.family);
  const fresh = await issueTokens(deps, { ...old, scope });
  await deps.db.update(oauthTokens).set({ successor: sealPair(oldSecret, fresh), lastUsedAt: deps.clock.now() }).where(eq(oauthTokens.tokenHash, old.tokenHash));
  return fresh;
}

/**
 * A client that refreshes twice at once (two requests racing, or a retry after a lost answer)
 * sends a refresh token the first request just rotated. Within the grace window it gets the pair
 * that rotation issued, as long as that pair still stands; after it, or once the grant was ended,
 * a rotated token coming back is treated as stolen (RFC 9700 4.14.2).
 */
export async function graceAnswer(deps: Deps, old: TokenRow, oldSecret: string): Promise<TokenAnswer | null> {
  const now = deps.clock.now();
  if (old.successor === null || old.revokedAt === null || now - old.revokedAt > REFRESH_GRACE_MS) return null;
  const pair = openPair(oldSecret, old.successor);
  if (!pair) return null;
  const access = await findToken(deps, pair[0], "access");
  const refresh = await findToken(deps, pair[1], "refresh");
  if (!access || !refresh || access.revokedAt !== null || refresh.revokedAt !== null || access.expiresAt <= now) return null;
  return { access_token: pair[0], token_type: "Bearer", expires_in: Math.ceil((access.expiresAt - now) / 1000), refresh_token: pair[1], scope: refresh.scope };
}

/** The principal of an OAuth access token, for /mcp only; 401 when unknown, expired or revoked. */
export async function oauthPrincipal(deps: Deps, secret: string): Promise<Principal> {
  const row = await findToken(deps, secret, "access");
  const now = deps.clock.now();
  if (!row || row.revokedAt !== null || row.expiresAt <= now) throw new AppError("unauthorized", "the access token is unknown, expired or revoked");
  // The last use the Connected apps page shows: at most one write a minute per token, not awaited,
  // so an agent's burst of calls costs one write and no call waits for it.
  if (row.lastUsedAt === null || row.lastUsedAt <= now - 60_000) {
    void deps.writer
      .write(async () => {
        await deps.db.update(oauthTokens).set({ lastUsedAt: now }).where(eq(oauthTokens.tokenHash, row.tokenHash));
      })
      .catch(() => {});
  }
  const tier = tierOf(deps, await getWorkspace(deps, row.workspaceId));
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
export async function revokeAccountGrants(deps: Deps, accountId: string): Promise<number> {
  const now = deps.clock.now();
  const unrevoked = and(eq(oauthTokens.accountId, accountId), isNull(oauthTokens.revokedAt));
  const live = await deps.db.select({ family: oauthTokens.family }).from(oauthTokens).where(and(unrevoked, gt(oauthTokens.expiresAt, now)));
  await deps.db.update(oauthTokens).set({ revokedAt: now }).where(unrevoked);
  return new Set(live.map((r) => r.family)).size;
}
