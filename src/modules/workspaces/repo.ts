import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import { tableRows } from "../../db/sql";
import type { Deps } from "../../deps";
import { folders, tokens, workspaces } from "../../db/tables";
import { AppError, NotFound } from "../../http/errors";
import { effectiveTier, isPlanName, type Tier } from "../../limits/plans";

export type WorkspaceRow = typeof workspaces.$inferSelect;

/**
 * On every request's path: a statement kept compiled rather than a built query (tableRows).
 * `lock`: an append's write holds the row until it commits (another instance's appends wait).
 */
export async function getWorkspace(deps: Deps, id: string, opts: { lock?: boolean } = {}): Promise<WorkspaceRow> {
  const [ws] = await tableRows(deps.store, workspaces, "WHERE id = ?", [id], opts);
  if (!ws) throw new NotFound("workspace");
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

/** Notes outside the trash (trashed ones count against no cap), as a workspace row keeps them. */
export function activeNotes(ws: Pick<WorkspaceRow, "plainNotes" | "richNotes">, format?: "plain" | "rich"): number {
  return format === "plain" ? ws.plainNotes : format === "rich" ? ws.richNotes : ws.plainNotes + ws.richNotes;
}

/**
 * activeNotes as the database has them now: read again, since a row read earlier in the write (an
 * append batch's cached workspace) misses the notes created since. The counts are kept on the
 * workspace's row by triggers on notes (migrations/0018), so this costs the same at any size.
 */
export async function countNotes(deps: Deps, workspaceId: string, format?: "plain" | "rich"): Promise<number> {
  const [r] = await deps.db
    .select({ plainNotes: workspaces.plainNotes, richNotes: workspaces.richNotes })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId));
  return r ? activeNotes(r, format) : 0;
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

