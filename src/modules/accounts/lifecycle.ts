import { and, desc, eq, gte, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { notes, tokens, workspaces } from "../../db/tables";
import { AppError } from "../../http/errors";
import { logEvent } from "../../http/log";
import { DAY_MS } from "../../lib/clock";
import { TRIAL_DAYS, TRIAL_GRACE_DAYS, tierFor, type PlanName } from "../../limits/plans";
import { moveToTrash, takeOutOfTrash, trashedRowColumns, type TrashedRow } from "../notes/trash";
import { getWorkspace, type WorkspaceRow } from "../workspaces/repo";

/**
 * Account states of section 3, on the workspace (the thing a plan and its caps belong to):
 *   active (free, or subscribed) → trial → trial_ended, and subscribed → read_only → active.
 * Every function here runs inside a write; each changes state in the database only, so a
 * restart loses nothing, and clears the token cache because a token's rights may change. A
 * transition the state does not allow is a 409 conflict.
 */

/** A transition's log line, once its write has committed (workspace ids only: no address, no name). */
function logTransition(deps: Deps, msg: string, fields: Record<string, string | number>): void {
  deps.writer.afterCommit(() => logEvent("info", msg, fields));
}

async function update(deps: Deps, id: string, set: Partial<WorkspaceRow>): Promise<void> {
  await deps.db.update(workspaces).set(set).where(eq(workspaces.id, id));
  deps.tokens.clear();
}

/** Once per workspace, from a plan without API access: 14 days of the REST API, 100 notes, 300 MB. */
export async function startTrial(deps: Deps, workspaceId: string): Promise<WorkspaceRow> {
  const ws = await getWorkspace(deps, workspaceId);
  if (ws.trialUsed) throw new AppError("conflict", "this account has already had its API trial");
  if (ws.state !== "active") throw new AppError("conflict", `a trial cannot start while the account is ${ws.state}`);
  if (tierFor(deps.config.limitProfile, ws.plan as PlanName).api) {
    throw new AppError("conflict", `the ${ws.plan} plan already includes the API`);
  }
  const now = deps.clock.now();
  const set = { state: "trial" as const, trialUsed: true, trialEndsAt: now + TRIAL_DAYS * DAY_MS };
  await update(deps, ws.id, set);
  return { ...ws, ...set };
}

/**
 * A subscription starts, changes plan or resumes: writes are allowed again, a pending trash is
 * called off and the notes the trial's end trashed come back. Losing API access revokes the API
 * tokens; a plan without a subscription (free) loses its browser-extension token.
 */
export async function subscribe(deps: Deps, workspaceId: string, plan: PlanName, opts: { paidAt?: number } = {}): Promise<WorkspaceRow> {
  const ws = await getWorkspace(deps, workspaceId);
  const set: Partial<WorkspaceRow> = {
    plan,
    state: "active",
    lapsedAt: null,
    trashDueAt: null,
    lastPaymentAt: opts.paidAt ?? ws.lastPaymentAt,
  };
  if (ws.state === "trial") set.trialEndsAt = deps.clock.now();
  await update(deps, ws.id, set);
  if (ws.state === "read_only" || ws.state === "trial_ended") logTransition(deps, "account reactivated", { workspace_id: ws.id, from: ws.state, plan });
  await restoreTrialTrash(deps, ws);
  const tier = tierFor(deps.config.limitProfile, plan);
  if (!tier.api) await revokeTokens(deps, ws.id, "api");
  if (plan === "free") await revokeTokens(deps, ws.id, "extension");
  return getWorkspace(deps, ws.id);
}

/** A payment arrived: it dates the read-only window and brings a lapsed account back. */
export async function recordPayment(deps: Deps, workspaceId: string, paidAt: number): Promise<void> {
  const ws = await getWorkspace(deps, workspaceId);
  if (ws.state === "read_only") await subscribe(deps, ws.id, ws.plan as PlanName, { paidAt });
  else await update(deps, ws.id, { lastPaymentAt: paidAt });
}

/** The subscription lapsed: read-only, the browser-extension token revoked. */
export async function lapse(deps: Deps, workspaceId: string): Promise<WorkspaceRow> {
  const ws = await getWorkspace(deps, workspaceId);
  if (ws.state === "read_only") return ws;
  if (ws.plan === "free") throw new AppError("conflict", "a free account has no subscription to lapse");
  await update(deps, ws.id, { state: "read_only", lapsedAt: deps.clock.now() });
  await revokeTokens(deps, ws.id, "extension");
  logTransition(deps, "account lapsed", { workspace_id: ws.id, plan: ws.plan });
  return getWorkspace(deps, ws.id);
}

async function revokeTokens(deps: Deps, workspaceId: string, kind: "api" | "extension"): Promise<void> {
  await deps.db
    .update(tokens)
    .set({ revokedAt: deps.clock.now() })
    .where(and(eq(tokens.workspaceId, workspaceId), eq(tokens.kind, kind), isNull(tokens.revokedAt)));
  deps.tokens.clear();
}

/**
 * The time-driven transitions, run by the scheduler and safe to run any number of times:
 * trials whose 14 days are up end; 30 days later, notes above the plan's own cap go to the
 * trash unless a subscription started in between.
 */
export async function runLifecycle(deps: Deps): Promise<{ trialsEnded: number; trashed: number }> {
  const now = deps.clock.now();
  const ended = await deps.db
    .update(workspaces)
    .set({ state: "trial_ended", trashDueAt: sql`${workspaces.trialEndsAt} + ${TRIAL_GRACE_DAYS * DAY_MS}` })
    .where(and(eq(workspaces.state, "trial"), lte(workspaces.trialEndsAt, now)))
    .returning({ id: workspaces.id });
  if (ended.length) deps.tokens.clear();
  for (const { id } of ended) logTransition(deps, "trial ended", { workspace_id: id });
  let trashed = 0;
  const due = await deps.db
    .select()
    .from(workspaces)
    .where(and(eq(workspaces.state, "trial_ended"), isNotNull(workspaces.trashDueAt), lte(workspaces.trashDueAt, now)));
  for (const ws of due) {
    const n = await trashAboveCap(deps, ws);
    trashed += n;
    if (n > 0) logTransition(deps, "notes trashed after the trial", { workspace_id: ws.id, notes: n });
    await deps.db.update(workspaces).set({ trashDueAt: null }).where(eq(workspaces.id, ws.id));
  }
  return { trialsEnded: ended.length, trashed };
}

/**
 * Keeps the most recently updated notes up to the plan's cap and moves the rest to the trash,
 * where their bytes stay counted until the purge (notes/trash.ts: one rule for every trash).
 */
async function trashAboveCap(deps: Deps, ws: WorkspaceRow): Promise<number> {
  const tier = tierFor(deps.config.limitProfile, ws.plan as PlanName);
  if (!tier.notes) return 0;
  const keep = "shared" in tier.notes ? tier.notes.shared : tier.notes.plain + tier.notes.rich;
  const now = deps.clock.now();
  // Locked before its notes, as deleteNote does (notes/service.ts).
  await getWorkspace(deps, ws.id, { lock: true });
  // The ids past the cap are cut here: an OFFSET without a LIMIT has no form both databases read.
  const active = await deps.db
    .select({ id: notes.id })
    .from(notes)
    .where(and(eq(notes.workspaceId, ws.id), isNull(notes.trashedAt)))
    .orderBy(desc(notes.updatedAt), desc(notes.id));
  const victims = active.slice(keep);
  for (const v of victims) await moveToTrash(deps, v.id, now);
  return victims.length;
}

/**
 * Brings back what the end of the trial trashed, not what the user deleted: a workspace whose
 * trial has ended cannot write, so nothing reached its trash from the trash date on but the
 * lifecycle's own (what the purge has not taken yet).
 */
async function restoreTrialTrash(deps: Deps, ws: WorkspaceRow): Promise<void> {
  if (ws.state !== "trial_ended" || ws.trialEndsAt === null) return;
  const trashedFrom = ws.trialEndsAt + TRIAL_GRACE_DAYS * DAY_MS;
  const rows: TrashedRow[] = await deps.db
    .select(trashedRowColumns)
    .from(notes)
    .where(and(eq(notes.workspaceId, ws.id), gte(notes.trashedAt, trashedFrom)));
  const now = deps.clock.now();
  for (const r of rows) await takeOutOfTrash(deps, r, now);
}
