import { and, eq } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { accounts, folders, workspaceMembers, workspaces } from "../../db/schema";
import { AppError } from "../../http/errors";
import { newId } from "../../lib/ids";
import { bodyCapFor, noteCapFor, tierFor, type PlanName } from "../../limits/plans";
import { countActiveTokens, countFolders, countNotes, getWorkspace, tierOf } from "../workspaces/repo";
import { iso } from "../../lib/clock";
import { requireScope, requireUnpinned } from "../tokens/service";

export type AccountRow = typeof accounts.$inferSelect;

export const SEED_FOLDERS = ["Inbox", "Projects", "Archive"];

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isPlausibleEmail(email: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) && email.length <= 254;
}

export function findAccountByEmail(deps: Deps, email: string): AccountRow | undefined {
  return deps.db.select().from(accounts).where(eq(accounts.email, normaliseEmail(email))).get();
}

export function personalWorkspaceId(deps: Deps, accountId: string): string {
  const ws = deps.db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(eq(workspaces.ownerId, accountId), eq(workspaces.kind, "personal")))
    .get();
  if (!ws) throw new AppError("internal_error", `account ${accountId} has no personal workspace`);
  return ws.id;
}

/**
 * Creates an account with its personal workspace on the given plan and the folders seeded at
 * signup (three, or one in the alternate profile). Runs inside the caller's write.
 */
export function createAccount(
  deps: Deps,
  input: { email: string; plan: PlanName; passwordHash?: string | null; name?: string; confirmed?: boolean; ageConfirmed?: boolean },
): { account: AccountRow; workspaceId: string } {
  const email = normaliseEmail(input.email);
  if (!isPlausibleEmail(email)) throw new AppError("bad_request", `"${input.email}" is not an e-mail address`);
  if (findAccountByEmail(deps, email)) throw new AppError("conflict", `an account with e-mail ${email} already exists`);
  const now = deps.clock.now();
  const account: AccountRow = {
    id: newId("acct"),
    email,
    passwordHash: input.passwordHash ?? null,
    name: input.name ?? "",
    bio: "",
    // Accounts made by an operator (the command line) need no mailed confirmation.
    emailConfirmedAt: input.confirmed === false ? null : now,
    ageConfirmedAt: input.ageConfirmed ? now : null,
    onboardedAt: null,
    usageMode: null,
    createdAt: now,
    updatedAt: now,
  };
  deps.db.insert(accounts).values(account).run();
  const workspaceId = newId("ws");
  deps.db
    .insert(workspaces)
    .values({ id: workspaceId, kind: "personal", name: email, ownerId: account.id, plan: input.plan, createdAt: now })
    .run();
  deps.db.insert(workspaceMembers).values({ workspaceId, accountId: account.id, role: "owner", createdAt: now }).run();
  const seeded = tierFor(deps.config.limitProfile, input.plan).seededFolders;
  for (const name of SEED_FOLDERS.slice(0, seeded)) {
    deps.db
      .insert(folders)
      .values({ id: newId("fold"), workspaceId, name, nameKey: name.toLowerCase(), createdAt: now, updatedAt: now })
      .run();
  }
  return { account, workspaceId };
}

/** GET /account: who, which plan and state, and usage against every cap. */
export function describeAccount({ ctx }: { ctx: Ctx }) {
  requireScope(ctx, "read");
  // The plan, usage and caps are the workspace's; a token pinned to one note learns only of that note.
  requireUnpinned(ctx, "read the account");
  const { deps, principal } = ctx;
  const account = deps.db.select().from(accounts).where(eq(accounts.id, principal.accountId)).get();
  if (!account) throw new AppError("unauthorized", "the token's account no longer exists");
  const ws = getWorkspace(deps, principal.workspaceId);
  const tier = tierOf(deps, ws);
  const plainCap = noteCapFor(tier, "plain");
  const richCap = noteCapFor(tier, "rich");
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    workspace: { id: ws.id, kind: ws.kind, name: ws.name },
    plan: ws.plan,
    limit_profile: deps.config.limitProfile,
    state: ws.state,
    trial_ends_at: iso(ws.trialEndsAt),
    api_access: tier.api || ws.state === "trial",
    usage: {
      notes: countNotes(deps, ws.id),
      plain_notes: countNotes(deps, ws.id, "plain"),
      rich_notes: countNotes(deps, ws.id, "rich"),
      storage_bytes: ws.storageUsed,
      folders: countFolders(deps, ws.id),
      active_tokens: countActiveTokens(deps, ws.id),
    },
    caps: {
      notes: plainCap?.shared ? plainCap.limit : null,
      plain_notes: plainCap && !plainCap.shared ? plainCap.limit : null,
      rich_notes: richCap && !richCap.shared ? richCap.limit : null,
      storage_bytes: tier.storage,
      plain_note_bytes: bodyCapFor(tier, "plain"),
      rich_note_bytes: bodyCapFor(tier, "rich"),
      folders: tier.folders,
      active_tokens: tier.tokens,
    },
    rate_limits_per_minute: tier.rate,
    created_at: iso(account.createdAt),
  };
}
