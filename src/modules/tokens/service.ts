import { and, count, desc, eq, gt, isNull, lt, or } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import type { Principal, Scope } from "../../principal";
import { tokens, notes } from "../../db/tables";
import { AppError, CapExceeded, InsufficientScope, unauthorized } from "../../http/errors";
import { DAY_MS } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { digestsEqual, newApiToken, sha256Hex, TOKEN_PREFIX } from "../../lib/secrets";
import { EXTENSION_APPENDS_PER_MINUTE } from "../../limits/plans";
import { countActiveTokens, getWorkspace, readableUntil, tierOf } from "../workspaces/repo";

export const SCOPES: readonly Scope[] = ["read", "write", "append"];
export const DEFAULT_EXPIRY_DAYS = 90;
export const MAX_EXPIRY_DAYS = 365;
/** A token's name, in characters: what a list shows in one line. */
export const TOKEN_NAME_MAX = 80;

export interface MintInput {
  accountId: string;
  workspaceId: string;
  scopes: Scope[];
  noteId?: string | null;
  expiresInDays?: number;
  name?: string;
}

export function parseScopes(raw: string): Scope[] {
  const parts = raw.split(",").map((s) => s.trim()).filter(Boolean);
  if (parts.length === 0) throw new AppError("bad_request", `--scope needs at least one of ${SCOPES.join(", ")}`);
  for (const p of parts) {
    if (!SCOPES.includes(p as Scope)) throw new AppError("bad_request", `unknown scope "${p}"; use ${SCOPES.join(", ")}`);
  }
  return [...new Set(parts as Scope[])];
}

/** Mints a token and returns its secret, which is never stored and never shown again. */
export async function mintToken(deps: Deps, input: MintInput): Promise<{ id: string; token: string; expiresAt: number }> {
  const days = input.expiresInDays ?? DEFAULT_EXPIRY_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS) {
    throw new AppError("bad_request", `expiry must be a whole number of days from 1 to ${MAX_EXPIRY_DAYS}`);
  }
  if ((input.name ?? "").length > TOKEN_NAME_MAX) throw new AppError("bad_request", `a token's name is at most ${TOKEN_NAME_MAX} characters`);
  const ws = await getWorkspace(deps, input.workspaceId);
  const tier = tierOf(deps, ws);
  if (input.noteId) {
    const [note] = await deps.db.select({ ws: notes.workspaceId, trashedAt: notes.trashedAt }).from(notes).where(eq(notes.id, input.noteId));
    if (!note || note.ws !== ws.id || note.trashedAt !== null) throw new AppError("not_found", `note ${input.noteId} is not in this workspace`);
  }
  if (tier.tokens !== null) {
    const used = await countActiveTokens(deps, ws.id);
    if (used >= tier.tokens) {
      throw new CapExceeded(
        "tokens",
        tier.tokens,
        used,
        tier.tokens === 0
          ? `the ${tier.name} plan has no API access, so it gets no API tokens`
          : `the ${tier.name} plan allows ${tier.tokens} active API tokens; ${used} are active (revoke one first)`,
      );
    }
  }
  return insertToken(deps, {
    workspaceId: ws.id,
    accountId: input.accountId,
    name: input.name ?? "",
    scopes: input.scopes.join(","),
    noteId: input.noteId ?? null,
    kind: "api",
    expiresAt: deps.clock.now() + days * DAY_MS,
  });
}

/**
 * The browser-extension token: one per subscriber, append-only, pinned to one stream, outside
 * the token cap. Minting a new one revokes the previous.
 */
export async function mintExtensionToken(deps: Deps, input: { accountId: string; workspaceId: string; noteId: string }): Promise<{ id: string; token: string; expiresAt: number }> {
  const ws = await getWorkspace(deps, input.workspaceId);
  if (ws.plan === "free" || ws.state !== "active") {
    throw new AppError("plan_required", "the browser-extension token is for active subscribers");
  }
  const [note] = await deps.db.select().from(notes).where(eq(notes.id, input.noteId));
  if (!note || note.workspaceId !== ws.id || note.trashedAt !== null) throw new AppError("not_found", `note ${input.noteId} is not in this workspace`);
  if (note.kind !== "stream") throw new AppError("bad_request", "the browser-extension token appends to a stream; that note is editable");
  const now = deps.clock.now();
  await deps.db
    .update(tokens)
    .set({ revokedAt: now })
    .where(and(eq(tokens.accountId, input.accountId), eq(tokens.kind, "extension"), isNull(tokens.revokedAt)));
  deps.tokens.clear();
  return insertToken(deps, {
    workspaceId: ws.id,
    accountId: input.accountId,
    name: "browser extension",
    scopes: "append",
    noteId: note.id,
    kind: "extension",
    expiresAt: now + MAX_EXPIRY_DAYS * DAY_MS,
  });
}

/** Stores a new token's hash and returns the secret, which is never stored and never shown again. */
async function insertToken(
  deps: Deps,
  t: { workspaceId: string; accountId: string; name: string; scopes: string; noteId: string | null; kind: "api" | "extension"; expiresAt: number },
): Promise<{ id: string; token: string; expiresAt: number }> {
  const secret = newApiToken();
  const id = newId("tok");
  await deps.db.insert(tokens).values({ id, ...t, tokenHash: sha256Hex(secret), createdAt: deps.clock.now() });
  return { id, token: secret, expiresAt: t.expiresAt };
}

export async function listTokens(deps: Deps, accountId: string) {
  return await deps.db.select().from(tokens).where(eq(tokens.accountId, accountId));
}

/** The workspace's tokens, newest first, revoked and expired ones included. */
export async function listWorkspaceTokens(deps: Deps, workspaceId: string) {
  return await deps.db.select().from(tokens).where(eq(tokens.workspaceId, workspaceId)).orderBy(desc(tokens.createdAt));
}

/** Revokes one of the workspace's tokens; another workspace's is the same 404 as a missing one. Inside the writer. */
export async function revokeWorkspaceToken(deps: Deps, workspaceId: string, tokenId: string): Promise<void> {
  const [t] = await deps.db.select({ id: tokens.id }).from(tokens).where(and(eq(tokens.id, tokenId), eq(tokens.workspaceId, workspaceId)));
  if (!t) throw new AppError("not_found", "no such token");
  await revokeToken(deps, t.id);
}


/** The secret inside an `Authorization: Bearer nst_…` header, or a 401 saying what is wrong. */
export function bearerSecret(authorization: string | null | undefined): string {
  if (!authorization) throw unauthorized("missing Authorization: Bearer <token> header");
  // The usual form, "Bearer <token>" with one space, without the capturing expression (every request).
  const plain = authorization.startsWith("Bearer ") ? authorization.slice(7) : "";
  const secret = plain !== "" && !/\s/.test(plain) ? plain : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  if (secret === undefined) throw unauthorized("Authorization header must be: Bearer <token>");
  if (!secret.startsWith(TOKEN_PREFIX)) throw unauthorized("unknown token");
  return secret;
}

/** A cached principal, if this token was resolved before and nothing has changed since. */
export function cachedPrincipal(deps: Deps, secret: string): Principal | undefined {
  const p = deps.tokens.get(secret);
  if (!p) return undefined;
  const now = deps.clock.now();
  if (p.validUntil <= now) return undefined;
  deps.tokens.touch(p.tokenId, now);
  return p;
}

/** Writes the tokens' last use (a periodic task). */
export async function flushTokenUse(deps: Deps): Promise<number> {
  const uses = deps.tokens.takeUses();
  for (const [id, at] of uses) {
    await deps.db
      .update(tokens)
      .set({ lastUsedAt: at })
      .where(and(eq(tokens.id, id), or(isNull(tokens.lastUsedAt), lt(tokens.lastUsedAt, at))));
  }
  return uses.size;
}

/** Resolves a token secret to its principal from the database (and caches it), or throws 401/403. */
export async function lookupPrincipal(deps: Deps, secret: string): Promise<Principal> {
  const hash = sha256Hex(secret);
  const [row] = await deps.db.select().from(tokens).where(eq(tokens.tokenHash, hash));
  // The index finds the row; the constant-time comparison keeps the final check free of timing leaks.
  if (!row || !digestsEqual(row.tokenHash, hash)) throw unauthorized("unknown token");
  if (row.revokedAt !== null) throw unauthorized("token revoked");
  const now = deps.clock.now();
  if (row.expiresAt <= now) throw unauthorized("token expired");
  const ws = await getWorkspace(deps, row.workspaceId);
  const tier = tierOf(deps, ws);
  if (row.kind === "extension") {
    // Any active subscriber's extension token works, API plan or not.
    if (ws.plan === "free" || ws.state !== "active") throw unauthorized("token revoked");
  } else if (!tier.api) {
    throw new AppError("plan_required", `the ${tier.name} plan has no API access`);
  }
  const readEnd = readableUntil(ws, tier);
  if (readEnd !== null && readEnd <= now) {
    throw new AppError("plan_required", "read access ended 12 months after the last payment; resubscribe to read these notes");
  }
  // A trial-era or read-only token can read until its expiry; the rights are re-read after any change.
  const principal: Principal = {
    tokenId: row.id,
    accountId: row.accountId,
    workspaceId: row.workspaceId,
    scopes: new Set(row.scopes.split(",") as Scope[]),
    noteId: row.noteId,
    kind: row.kind,
    // The extension token's scope refuses reads and writes; its only budget is appends.
    rate:
      row.kind === "extension"
        ? { reads: EXTENSION_APPENDS_PER_MINUTE, writes: EXTENSION_APPENDS_PER_MINUTE, appends: EXTENSION_APPENDS_PER_MINUTE }
        : tier.rate,
    validUntil: Math.min(row.expiresAt, readEnd ?? Infinity),
  };
  deps.tokens.set(secret, principal);
  deps.tokens.touch(principal.tokenId, now);
  return principal;
}

/**
 * Resolves a Bearer header to its principal, or throws 401 (used where no rate limit applies).
 * A cached token is answered at once, without a promise; only a lookup is async.
 */
export function authenticate(deps: Deps, authorization: string | null | undefined): Principal | Promise<Principal> {
  const secret = bearerSecret(authorization);
  return cachedPrincipal(deps, secret) ?? lookupPrincipal(deps, secret);
}

/** `write` covers everything `append` does: create, edit, delete, move and append. */
export function requireScope(ctx: Ctx, scope: Scope): void {
  const s = ctx.principal.scopes;
  const ok = s.has(scope) || (scope === "append" && s.has("write"));
  if (!ok) throw new InsufficientScope(`this token lacks the ${scope} scope`);
}

/**
 * The pin rule: a token pinned to one note sees that note and nothing else of its workspace.
 * Every lookup of a note by id or filename asks this, so a foreign note and a missing one are the
 * same 404.
 */
export function seesNote(principal: Principal, noteId: string): boolean {
  return !principal.noteId || principal.noteId === noteId;
}

/** Actions on the workspace as a whole (creating notes, folders) are closed to a token pinned to one note. */
export function requireUnpinned(ctx: Ctx, action: string): void {
  if (ctx.principal.noteId) throw new InsufficientScope(`a token pinned to one note cannot ${action}`);
}

export async function revokeToken(deps: Deps, tokenId: string): Promise<void> {
  await deps.db.update(tokens).set({ revokedAt: deps.clock.now() }).where(eq(tokens.id, tokenId));
  deps.tokens.clear();
}

/** Revokes every token an account minted, in any workspace, after a takeover; returns how many were live. */
export async function revokeAccountTokens(deps: Deps, accountId: string): Promise<number> {
  const now = deps.clock.now();
  const unrevoked = and(eq(tokens.accountId, accountId), isNull(tokens.revokedAt));
  const [row] = await deps.db.select({ n: count() }).from(tokens).where(and(unrevoked, gt(tokens.expiresAt, now)));
  const live = row!.n;
  await deps.db.update(tokens).set({ revokedAt: now }).where(unrevoked);
  // Cached principals would keep answering until they expire.
  deps.tokens.clear();
  return live;
}
