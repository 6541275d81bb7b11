import { aliasedTable, and, desc, eq, gt, isNull, max, min, sql } from "drizzle-orm";
import { oauthClients, oauthTokens } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { revokeFamily } from "./tokens";

/**
 * A grant: what an account allowed one client on the consent page, carried by a family of
 * tokens (rotation keeps the family, see tokens.ts). Its id is the family. A grant stands while
 * its current refresh token is neither revoked nor expired.
 */
export interface Grant {
  id: string;
  clientId: string;
  /** As the client named itself: unverified. */
  clientName: string;
  redirectUris: string[];
  scope: string;
  workspaceId: string;
  grantedAt: number;
  lastUsedAt: number | null;
}

// The grant's other tokens (its family), for when it was granted and last used.
const f = aliasedTable(oauthTokens, "f");

/** A grant's rows: its current refresh token (standing: neither revoked nor expired) with its client. */
function liveGrants(deps: Deps) {
  const family = eq(f.family, oauthTokens.family);
  const grantedAt = sql<number>`(${deps.db.select({ at: min(f.createdAt) }).from(f).where(family)})`.mapWith(Number).as("granted_at");
  // Null (never used) stays null: drizzle decodes only values that are not null.
  const lastUsedAt = sql<number | null>`(${deps.db.select({ at: max(f.lastUsedAt) }).from(f).where(family)})`.mapWith((v): number | null => Number(v)).as("last_used_at");
  return deps.db
    .select({
      family: oauthTokens.family,
      clientId: oauthTokens.clientId,
      clientName: oauthClients.clientName,
      redirectUris: oauthClients.redirectUris,
      scope: oauthTokens.scope,
      workspaceId: oauthTokens.workspaceId,
      grantedAt,
      lastUsedAt,
    })
    .from(oauthTokens)
    .innerJoin(oauthClients, eq(oauthClients.clientId, oauthTokens.clientId))
    .$dynamic();
}

const standing = (deps: Deps) => and(eq(oauthTokens.kind, "refresh"), isNull(oauthTokens.revokedAt), gt(oauthTokens.expiresAt, deps.clock.now()));

type GrantRow = Awaited<ReturnType<typeof liveGrants>>[number];

const toGrant = (r: GrantRow): Grant => ({
  id: r.family,
  clientId: r.clientId,
  clientName: r.clientName,
  redirectUris: JSON.parse(r.redirectUris) as string[],
  scope: r.scope,
  workspaceId: r.workspaceId,
  grantedAt: r.grantedAt,
  lastUsedAt: r.lastUsedAt,
});

/** The account's standing grants, newest first. */
export async function listGrants(deps: Deps, accountId: string): Promise<Grant[]> {
  const rows = await liveGrants(deps)
    .where(and(standing(deps), eq(oauthTokens.accountId, accountId)))
    .orderBy(desc(sql.identifier("granted_at")), oauthTokens.family);
  return rows.map(toGrant);
}

/** Ends one grant (its refresh and access tokens); another account's is the same 404 as a missing one. Inside the writer. */
export async function revokeGrant(deps: Deps, id: string, accountId?: string): Promise<Grant> {
  const [row] = await liveGrants(deps)
    .where(and(standing(deps), eq(oauthTokens.family, id), accountId ? eq(oauthTokens.accountId, accountId) : undefined))
    .limit(1);
  if (!row) throw new AppError("not_found", `no connected app with grant id ${id}`);
  await revokeFamily(deps, id);
  return toGrant(row);
}
