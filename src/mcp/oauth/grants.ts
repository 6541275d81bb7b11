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

interface GrantRow {
  family: string;
  client_id: string;
  client_name: string;
  redirect_uris: string;
  scope: string;
  workspace_id: string;
  granted_at: number;
  last_used_at: number | null;
}

const LIVE_GRANTS = `
  SELECT t.family, t.client_id, c.client_name, c.redirect_uris, t.scope, t.workspace_id,
         (SELECT min(f.created_at) FROM oauth_tokens f WHERE f.family = t.family) AS granted_at,
         (SELECT max(f.last_used_at) FROM oauth_tokens f WHERE f.family = t.family) AS last_used_at
  FROM oauth_tokens t JOIN oauth_clients c ON c.client_id = t.client_id
  WHERE t.kind = 'refresh' AND t.revoked_at IS NULL AND t.expires_at > ?`;

const toGrant = (r: GrantRow): Grant => ({
  id: r.family,
  clientId: r.client_id,
  clientName: r.client_name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  scope: r.scope,
  workspaceId: r.workspace_id,
  grantedAt: r.granted_at,
  lastUsedAt: r.last_used_at,
});

/** The account's standing grants, newest first. */
export function listGrants(deps: Deps, accountId: string): Grant[] {
  const rows = deps.db.$client.query(`${LIVE_GRANTS} AND t.account_id = ? ORDER BY granted_at DESC, t.family`).all(deps.clock.now(), accountId) as GrantRow[];
  return rows.map(toGrant);
}

/** Ends one grant (its refresh and access tokens); another account's is the same 404 as a missing one. Inside the writer. */
export function revokeGrant(deps: Deps, id: string, accountId?: string): Grant {
  const row = deps.db.$client.query(`${LIVE_GRANTS} AND t.family = ?${accountId ? " AND t.account_id = ?" : ""}`).get(deps.clock.now(), id, ...(accountId ? [accountId] : [])) as GrantRow | null;
  if (!row) throw new AppError("not_found", `no connected app with grant id ${id}`);
  revokeFamily(deps, id);
  return toGrant(row);
}
