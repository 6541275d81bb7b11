import { and, eq } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { accounts, folders, workspaceMembers, workspaces } from "../../db/tables";
import { AppError } from "../../http/errors";
import { newId } from "../../lib/ids";
import { bodyCapFor, noteCapFor, tierFor, type PlanName } from "../../limits/plans";
import { activeNotes, countActiveTokens, countFolders, getWorkspace, tierOf } from "../workspaces/repo";
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

export async function findAccountByEmail(deps: Deps, email: string): Promise<AccountRow | undefined> {
  const [account] = await deps.db.select().from(accounts).where(eq(accounts.email, normaliseEmail(email)));
  return account;
}

export async function personalWorkspaceId(deps: Deps, accountId: string): Promise<string> {
  const [ws] = await deps.db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(eq(workspaces.ownerId, accountId), eq(workspaces.kind, "personal")))
    .limit(1);
  if (!ws) throw new AppError("internal_error", `account ${accountId} has no personal workspace`);
  return ws.id;
}

/**
 * Creates an account with its personal workspace on the given plan and the folders seeded at
 * signup (three, or one in the alternate profile). Runs inside the caller's write.
 */
export async function createAccount(
  deps: Deps,
  input: { email: string; plan: PlanName; passwordHash?: string | null; name?: string; confirmed?: boolean; ageConfirmed?: boolean },
): Promise<{ account: AccountRow; workspaceId: string }> {
  const email = normaliseEmail(input.email);
  if (!isPlausibleEmail(email)) throw new AppError("bad_request", `"${input.email}" is not an e-mail address`);
  if (await findAccountByEmail(deps, email)) throw new AppError("conflict", `an account with e-mail ${email} already exists`);
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
  await deps.db.insert(accounts).values(account);
  const workspaceId = newId("ws");
  await deps.db
    .insert(workspaces)
    .values({ id: workspaceId, kind: "personal", name: email, ownerId: account.id, plan: input.plan, createdAt: now });
  await deps.db.insert(workspaceMembers).values({ workspaceId, accountId: account.id, role: "owner", createdAt: now });
  const seeded = tierFor(deps.config.limitProfile, input.plan).seededFolders;
  for (const name of SEED_FOLDERS.slice(0, seeded)) {
    await deps.db
      .insert(folders)
      .values({ id: newId("fold"), workspaceId, name, nameKey: name.toLowerCase(), createdAt: now, updatedAt: now });
  }
  return { account, workspaceId };
}

/** GET /account: who, which plan and state, and usage against every cap. */
export async function describeAccount({ ctx }: { ctx: Ctx }) {
  requireScope(ctx, "read");
  // The plan, usage and caps are the workspace's; a token pinned to one note learns only of that note.
  requireUnpinned(ctx, "read the account");
  const { deps, principal } = ctx;
  const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, principal.accountId));
  if (!account) throw new AppError("unauthorized", "the token's account no longer exists");
  const ws = await getWorkspace(deps, principal.workspaceId);
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
      // Kept on the workspace's row; folders and tokens, few beside notes, are counted.
      notes: activeNotes(ws),
      plain_notes: activeNotes(ws, "plain"),
      rich_notes: activeNotes(ws, "rich"),
      storage_bytes: ws.storageUsed,
      folders: await countFolders(deps, ws.id),
      active_tokens: await countActiveTokens(deps, ws.id),
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
