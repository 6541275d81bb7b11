import { eq } from "drizzle-orm";
import type { Ctx, Deps } from "../deps";
import type { Principal } from "../principal";
import { accounts, sessions } from "../db/tables";
import { AppError } from "../http/errors";
import { randomBase62 } from "../lib/random";
import { digestsEqual, sha256Hex } from "../lib/secrets";
import { personalWorkspaceId, type AccountRow } from "../modules/accounts/service";
import { workspacesOf, type WorkspaceChoice } from "../modules/teams/service";

export const SESSION_COOKIE = "ns_session";
export const FORM_COOKIE = "ns_form";
const SESSION_TTL_MS = 30 * 86_400_000;

export interface WebSession {
  account: AccountRow;
  /** The workspace the session works in: its notes, tokens and settings are what the pages show. */
  workspaceId: string;
  /** Every workspace the account may switch to (the personal one first), for the header's switcher. */
  workspaces: WorkspaceChoice[];
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
  await deps.writer.write(async () => {
    await deps.db.insert(sessions).values({
      idHash: sha256Hex(secret),
      accountId: account.id,
      workspaceId: await personalWorkspaceId(deps, account.id),
      csrfToken: randomBase62(32),
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
    });
  });
  return { secret };
}

export async function loadSession(deps: Deps, request: Request): Promise<WebSession | null> {
  const secret = cookieValue(request, SESSION_COOKIE);
  if (!secret) return null;
  const idHash = sha256Hex(secret);
  const [row] = await deps.db.select().from(sessions).where(eq(sessions.idHash, idHash));
  if (!row || row.expiresAt <= deps.clock.now()) return null;
  const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, row.accountId));
  if (!account) return null;
  const choices = await workspacesOf(deps, account.id);
  let workspaceId = row.workspaceId;
  // Membership is checked on every request, not only when switching: someone taken off a team
  // is back in their personal workspace at once, whatever the session chose before.
  if (!choices.some((w) => w.id === workspaceId)) {
    workspaceId = choices.find((w) => w.kind === "personal")?.id ?? (await personalWorkspaceId(deps, account.id));
    const fallback = workspaceId;
    // Stored so the choice stays personal if the account joins the team again; a failed write
    // costs nothing, as the next request falls back the same way.
    void deps.writer
      .write(async () => {
        await deps.db.update(sessions).set({ workspaceId: fallback }).where(eq(sessions.idHash, idHash));
      })
      .catch(() => {});
  }
  return {
    account,
    workspaceId,
    workspaces: choices,
    csrf: row.csrfToken,
    ctx: { deps, principal: webPrincipal(account.id, workspaceId, row.expiresAt) },
  };
}

/** Moves the session to another workspace the account belongs to; refused (404, like a missing one) for any other. */
export async function switchWorkspace(deps: Deps, request: Request, s: WebSession, workspaceId: string): Promise<WorkspaceChoice> {
  const target = s.workspaces.find((w) => w.id === workspaceId);
  const idHash = sessionIdHash(request);
  if (!target || !idHash) throw new AppError("not_found", "You are not a member of that workspace.");
  await deps.writer.write(async () => {
    // Checked again inside the write: a removal may have landed since the session was loaded.
    if (!(await workspacesOf(deps, s.account.id)).some((w) => w.id === target.id)) throw new AppError("not_found", "You are not a member of that workspace.");
    await deps.db.update(sessions).set({ workspaceId: target.id }).where(eq(sessions.idHash, idHash));
  });
  return target;
}

/** The stored id of this browser's session (whether or not it is still valid), or null. */
export function sessionIdHash(request: Request): string | null {
  const secret = cookieValue(request, SESSION_COOKIE);
  return secret ? sha256Hex(secret) : null;
}

export async function destroySession(deps: Deps, request: Request): Promise<void> {
  const secret = cookieValue(request, SESSION_COOKIE);
  if (!secret) return;
  await deps.writer.write(async () => {
    await deps.db.delete(sessions).where(eq(sessions.idHash, sha256Hex(secret)));
  });
}

export function csrfMatches(expected: string, given: unknown): boolean {
  return typeof given === "string" && given.length === expected.length && digestsEqual(sha256Hex(expected), sha256Hex(given));
}
