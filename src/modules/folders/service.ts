import { and, asc, count, eq, isNull, ne } from "drizzle-orm";
import { commit, type Reply } from "../../db/commit";
import { paged } from "../../db/paged";
import type { Ctx } from "../../deps";
import { folders, notes } from "../../db/schema";
import { CapExceeded, Conflict, NotFound, ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { charLength, hasLoneSurrogate, stripControl } from "../../lib/text";
import { writableWorkspace } from "../notes/service";
import { requireScope, requireUnpinned } from "../tokens/service";
import { countFolders, tierOf } from "../workspaces/repo";
import type { FolderRecord } from "./model";

export const FOLDER_NAME_MAX = 80;

type FolderRow = typeof folders.$inferSelect;

function cleanName(raw: string): string {
  const name = stripControl(raw).trim();
  if (name === "") throw ValidationFailed.field("folder.name", "blank", "folder name must not be empty");
  if (charLength(name) > FOLDER_NAME_MAX) {
    throw ValidationFailed.field("folder.name", "too_long", `folder name must be at most ${FOLDER_NAME_MAX} characters`);
  }
  if (hasLoneSurrogate(name)) throw ValidationFailed.field("folder.name", "invalid", "folder name must be valid Unicode");
  return name;
}

function nameKey(name: string): string {
  return name.toLocaleLowerCase("und");
}

function assertNameFree(ctx: Ctx, key: string, exceptId?: string): void {
  const conds = [eq(folders.workspaceId, ctx.principal.workspaceId), eq(folders.nameKey, key)];
  if (exceptId) conds.push(ne(folders.id, exceptId));
  if (ctx.deps.db.select({ id: folders.id }).from(folders).where(and(...conds)).get()) {
    throw new Conflict("a folder with that name already exists (names are compared without regard to case)");
  }
}

function noteCount(ctx: Ctx, folderId: string): number {
  return ctx.deps.db.select({ n: count() }).from(notes).where(and(eq(notes.folderId, folderId), isNull(notes.trashedAt))).get()!.n;
}

function toRecord(row: FolderRow, noteCount: number): FolderRecord {
  return { id: row.id, name: row.name, note_count: noteCount, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt) };
}

function visibleFolder(ctx: Ctx, id: string): FolderRow {
  const row = ctx.deps.db
    .select()
    .from(folders)
    .where(and(eq(folders.id, id), eq(folders.workspaceId, ctx.principal.workspaceId)))
    .get();
  if (!row) throw new NotFound("folder");
  return row;
}

export function listFolders({ ctx, page }: { ctx: Ctx; page: Page }): { items: FolderRecord[]; total: number } {
  requireScope(ctx, "read");
  // Folder names and note counts describe the whole workspace, which a pinned token does not see.
  requireUnpinned(ctx, "list folders");
  const { db } = ctx.deps;
  const where = eq(folders.workspaceId, ctx.principal.workspaceId);
  const rows = db
    .select({ folder: folders, notes: count(notes.id) })
    .from(folders)
    .leftJoin(notes, and(eq(notes.folderId, folders.id), isNull(notes.trashedAt)))
    .where(where)
    .groupBy(folders.id)
    .orderBy(asc(folders.nameKey));
  const { items, total } = paged(db, { from: folders, where, rows, page });
  return { items: items.map((r) => toRecord(r.folder, r.notes)), total };
}

export async function createFolder({ ctx, name: raw }: { ctx: Ctx; name: string }): Promise<Reply<FolderRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage folders");
  const name = cleanName(raw);
  const { deps } = ctx;
  return commit(ctx, 201, () => {
    const ws = writableWorkspace(ctx);
    const tier = tierOf(deps, ws);
    if (tier.folders !== null) {
      const used = countFolders(deps, ws.id);
      if (used >= tier.folders) {
        throw new CapExceeded("folders", tier.folders, used, `a workspace may have ${tier.folders} folders; delete one first`);
      }
    }
    assertNameFree(ctx, nameKey(name));
    const now = deps.clock.now();
    const row: FolderRow = { id: newId("fold"), workspaceId: ws.id, name, nameKey: nameKey(name), createdAt: now, updatedAt: now };
    deps.db.insert(folders).values(row).run();
    return toRecord(row, 0);
  });
}

export async function renameFolder({ ctx, id, name: raw }: { ctx: Ctx; id: string; name: string }): Promise<Reply<FolderRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage folders");
  const name = cleanName(raw);
  const { deps } = ctx;
  return commit(ctx, 200, () => {
    const row = visibleFolder(ctx, id);
    writableWorkspace(ctx);
    assertNameFree(ctx, nameKey(name), row.id);
    const now = deps.clock.now();
    deps.db.update(folders).set({ name, nameKey: nameKey(name), updatedAt: now }).where(eq(folders.id, row.id)).run();
    return toRecord({ ...row, name, nameKey: nameKey(name), updatedAt: now }, noteCount(ctx, row.id));
  });
}

/** Deleting a folder keeps its notes: they become unfiled (ON DELETE SET NULL). */
export async function deleteFolder({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ id: string; deleted: true }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage folders");
  const { deps } = ctx;
  return commit(ctx, 200, () => {
    const row = visibleFolder(ctx, id);
    writableWorkspace(ctx);
    deps.db.delete(folders).where(eq(folders.id, row.id)).run();
    return { id: row.id, deleted: true as const };
  });
}
