import { eq } from "drizzle-orm";
import type { Ctx, Deps, Principal } from "../deps";
import { accounts, sessions } from "../db/schema";
import { randomBase62 } from "../lib/random";
import { digestsEqual, sha256Hex } from "../lib/secrets";
import { personalWorkspaceId, type AccountRow } from "../modules/accounts/service";

export const SESSION_COOKIE = "ns_session";
export const FORM_COOKIE = "ns_form";
const SESSION_TTL_MS = 30 * 86_400_000;

export interface WebSession {
  account: AccountRow;
  workspaceId: string;
  csrf: string;
  ctx: Ctx;
}

export function cookieValue(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return null;
}

function secure(deps: Deps): string {
  return deps.config.baseUrl?.startsWith("https:") ? "; Secure" : "";
}

/** HTTP-only, SameSite=Lax: the browser sends it on our pages and top-level links, never to scripts. */
export function sessionCookie(deps: Deps, secret: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure(deps)}`;
}

/** For forms shown before sign-in: a double-submit token, in a cookie and in the form. */
export function formCookie(deps: Deps, token: string): string {
  return `${FORM_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600${secure(deps)}`;
}

/** The session's principal: the account in its workspace, with every scope a browser user has. */
export function webPrincipal(accountId: string, workspaceId: string, validUntil: number): Principal {
  return {
    tokenId: "session",
    accountId,
    workspaceId,
    scopes: new Set(["read", "write", "append"]),
    noteId: null,
    kind: "api",
    rate: null,
    validUntil,
  };
}

export async function createSession(deps: Deps, account: AccountRow): Promise<{ secret: string }> {
  const secret = randomBase62(43);
  const now = deps.clock.now();
  await deps.writer.write(() =>
    deps.db
      .insert(sessions)
      .values({
        idHash: sha256Hex(secret),
        accountId: account.id,
        workspaceId: personalWorkspaceId(deps, account.id),
        csrfToken: randomBase62(32),
        createdAt: now,
        expiresAt: now + SESSION_TTL_MS,
      })
      .run(),
  );
  return { secret };
}

export function loadSession(deps: Deps, request: Request): WebSession | null {
  const secret = cookieValue(request, SESSION_COOKIE);
  if (!secret) return null;
  const row = deps.db.select().from(sessions).where(eq(sessions.idHash, sha256Hex(secret))).get();
  if (!row || row.expiresAt <= deps.clock.now()) return null;
  const account = deps.db.select().from(accounts).where(eq(accounts.id, row.accountId)).get();
  if (!account) return null;
  return {
    account,
    workspaceId: row.workspaceId,
    csrf: row.csrfToken,
    ctx: { deps, principal: webPrincipal(account.id, row.workspaceId, row.expiresAt) },
  };
}

/** The stored id of this browser's session (whether or not it is still valid), or null. */
export function sessionIdHash(request: Request): string | null {
  const secret = cookieValue(request, SESSION_COOKIE);
  return secret ? sha256Hex(secret) : null;
}

export async function destroySession(deps: Deps, request: Request): Promise<void> {
  const secret = cookieValue(request, SESSION_COOKIE);
  if (secret) await deps.writer.write(() => deps.db.delete(sessions).where(eq(sessions.idHash, sha256Hex(secret))).run());
}

export function csrfMatches(expected: string, given: unknown): boolean {
  return typeof given === "string" && given.length === expected.length && digestsEqual(sha256Hex(expected), sha256Hex(given));
}
