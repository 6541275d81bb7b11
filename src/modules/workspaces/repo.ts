import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import { selectList } from "../../db/rows";
import type { Deps } from "../../deps";
import { folders, notes, tokens, workspaces } from "../../db/schema";
import { AppError, NotFound } from "../../http/errors";
import { effectiveTier, isPlanName, type Tier } from "../../limits/plans";

export type WorkspaceRow = typeof workspaces.$inferSelect;

const WORKSPACE_COLUMNS = selectList(workspaces);

/** On every request's path: a cached prepared statement rather than a built query. */
export function getWorkspace(deps: Deps, id: string): WorkspaceRow {
  const ws = deps.db.$client.query<WorkspaceRow, [string]>(`SELECT ${WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?`).get(id);
  if (!ws) throw new NotFound("workspace");
  ws.trialUsed = Boolean(ws.trialUsed);
  return ws;
}

export function tierOf(deps: Deps, ws: WorkspaceRow): Tier {
  if (!isPlanName(ws.plan)) throw new AppError("internal_error", `workspace ${ws.id} has unknown plan ${ws.plan}`);
  return effectiveTier(deps.config.limitProfile, ws.plan, ws.state);
}

/** Writes are refused while the account is read-only (lapsed) or its trial has ended. */
export function canWrite(ws: WorkspaceRow): boolean {
  return ws.state === "active" || ws.state === "trial";
}

export function assertWritable(ws: WorkspaceRow): WorkspaceRow {
  if (!canWrite(ws)) {
    throw new AppError("account_read_only", "this account is read-only: existing notes can be read and exported, not changed");
  }
  return ws;
}

/** Until when a lapsed workspace stays readable: months after the last payment, or forever (null). */
export function readableUntil(ws: WorkspaceRow, tier: Tier): number | null {
  if (ws.state !== "read_only" || tier.readOnlyMonths === null) return null;
  const from = new Date(ws.lastPaymentAt ?? ws.lapsedAt ?? ws.createdAt);
  from.setUTCMonth(from.getUTCMonth() + tier.readOnlyMonths);
  return from.getTime();
}

/**
 * Active notes: trashed ones count against no cap. Synchronous (SQLite's driver): an append's
 * checks count a new stream's slot with it (caps.ts assertNoteSlots), and they stay synchronous.
 */
export function countNotes(deps: Deps, workspaceId: string, format?: "plain" | "rich"): number {
  const active = and(eq(notes.workspaceId, workspaceId), isNull(notes.trashedAt));
  const where = format ? and(active, eq(notes.format, format)) : active;
  return deps.db.select({ n: count() }).from(notes).where(where).get()!.n;
}

export async function countFolders(deps: Deps, workspaceId: string): Promise<number> {
  const [r] = await deps.db.select({ n: count() }).from(folders).where(eq(folders.workspaceId, workspaceId));
  return r!.n;
}

export async function countActiveTokens(deps: Deps, workspaceId: string): Promise<number> {
  const [r] = await deps.db
    .select({ n: count() })
    .from(tokens)
    .where(
      and(
        eq(tokens.workspaceId, workspaceId),
        eq(tokens.kind, "api"),
        isNull(tokens.revokedAt),
        gt(tokens.expiresAt, deps.clock.now()),
      ),
    );
  return r!.n;
}

export async function addStorage(deps: Deps, workspaceId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await deps.db
    .update(workspaces)
    .set({ storageUsed: sql`${workspaces.storageUsed} + ${delta}` })
    .where(eq(workspaces.id, workspaceId));
}

