import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { folders, notes, tokens, workspaces } from "../../db/schema";
import { AppError, NotFound } from "../../http/errors";
import { isPlanName, tierFor, type Tier } from "../../limits/plans";

export type WorkspaceRow = typeof workspaces.$inferSelect;

export function getWorkspace(deps: Deps, id: string): WorkspaceRow {
  const ws = deps.db.select().from(workspaces).where(eq(workspaces.id, id)).get();
  if (!ws) throw new NotFound("workspace");
  return ws;
}

export function tierOf(deps: Deps, ws: WorkspaceRow): Tier {
  if (!isPlanName(ws.plan)) throw new AppError("internal_error", `workspace ${ws.id} has unknown plan ${ws.plan}`);
  return tierFor(deps.config.limitProfile, ws.plan);
}

/** Writes are refused while the account is read-only (lapsed) or its trial has ended. */
export function canWrite(ws: WorkspaceRow): boolean {
  return ws.state === "active" || ws.state === "trial";
}

export function countNotes(deps: Deps, workspaceId: string, format?: "plain" | "rich"): number {
  const where = format
    ? and(eq(notes.workspaceId, workspaceId), eq(notes.format, format))
    : eq(notes.workspaceId, workspaceId);
  return deps.db.select({ n: count() }).from(notes).where(where).get()!.n;
}

export function countFolders(deps: Deps, workspaceId: string): number {
  return deps.db.select({ n: count() }).from(folders).where(eq(folders.workspaceId, workspaceId)).get()!.n;
}

export function countActiveTokens(deps: Deps, workspaceId: string): number {
  return deps.db
    .select({ n: count() })
    .from(tokens)
    .where(
      and(
        eq(tokens.workspaceId, workspaceId),
        eq(tokens.kind, "api"),
        isNull(tokens.revokedAt),
        gt(tokens.expiresAt, deps.clock.now()),
      ),
    )
    .get()!.n;
}

export function addStorage(deps: Deps, workspaceId: string, delta: number): void {
  if (delta === 0) return;
  deps.db
    .update(workspaces)
    .set({ storageUsed: sql`${workspaces.storageUsed} + ${delta}` })
    .where(eq(workspaces.id, workspaceId))
    .run();
}
