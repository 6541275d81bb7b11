import { and, asc, eq, ne } from "drizzle-orm";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { mayNameRow } from "../../db/keys";
import { paged } from "../../db/paged";
import type { Ctx } from "../../deps";
import { folders } from "../../db/tables";
import { CapExceeded, Conflict, NotFound, ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { charLength, FOLDER_NAME_MAX_CHARS, hasLoneSurrogate, stripControl } from "../../lib/text";
import { writableWorkspace } from "../notes/service";
import { requireScope, requireUnpinned } from "../tokens/service";
import { countFolders, tierOf } from "../workspaces/repo";
import type { FolderRecord } from "./model";

type FolderRow = typeof folders.$inferSelect;

function cleanName(raw: string): string {
  const name = stripControl(raw).trim();
  if (name === "") throw ValidationFailed.field("folder.name", "blank", "folder name must not be empty");
  if (charLength(name) > FOLDER_NAME_MAX_CHARS) {
    throw ValidationFailed.field("folder.name", "too_long", `folder name must be at most ${FOLDER_NAME_MAX_CHARS} characters`);
  }
  if (hasLoneSurrogate(name)) throw ValidationFailed.field("folder.name", "invalid", "folder name must be valid Unicode");
  return name;
}

function nameKey(name: string): string {
  return name.toLocaleLowerCase("und");
}

async function assertNameFree(ctx: Ctx, key: string, exceptId?: string): Promise<void> {
  const conds = [eq(folders.workspaceId, ctx.principal.workspaceId), eq(folders.nameKey, key)];
  if (exceptId) conds.push(ne(folders.id, exceptId));
  const [taken] = await ctx.deps.db.select({ id: folders.id }).from(folders).where(and(...conds)).limit(1);
  if (taken) {
    throw new Conflict("a folder with that name already exists (names are compared without regard to case)");
  }
}

/** A folder as the API shows it; its note count is kept on its row (migrations/0018). */
function toRecord(row: FolderRow): FolderRecord {
  return { id: row.id, name: row.name, note_count: row.noteCount, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt) };
}

async function visibleFolder(ctx: Ctx, id: string): Promise<FolderRow> {
  if (!mayNameRow(id)) throw new NotFound("folder");
  const [row] = await ctx.deps.db
    .select()
    .from(folders)
    .where(and(eq(folders.id, id), eq(folders.workspaceId, ctx.principal.workspaceId)));
  if (!row) throw new NotFound("folder");
  return row;
}

export async function listFolders({ ctx, page }: { ctx: Ctx; page: Page }): Promise<{ items: FolderRecord[]; total: number }> {
  requireScope(ctx, "read");
  // Folder names and note counts describe the whole workspace, which a pinned token does not see.
  requireUnpinned(ctx, "list folders");
  const { db } = ctx.deps;
  const where = eq(folders.workspaceId, ctx.principal.workspaceId);
  const rows = db.select().from(folders).where(where).orderBy(asc(folders.nameKey));
  const { items, total } = await paged(db, { from: folders, where, rows, page });
  return { items: items.map(toRecord), total };
}

export async function createFolder({ ctx, name: raw }: { ctx: Ctx; name: string }): Promise<Reply<FolderRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage folders");
  const name = cleanName(raw);
  const { deps } = ctx;
  return commit(ctx, 201, async () => {
    const ws = await writableWorkspace(ctx);
    const tier = tierOf(deps, ws);
    if (tier.folders !== null) {
      const used = await countFolders(deps, ws.id);
      if (used >= tier.folders) {
        throw new CapExceeded("folders", tier.folders, used, `a workspace may have ${tier.folders} folders; delete one first`);
      }
    }
    await assertNameFree(ctx, nameKey(name));
    const now = deps.clock.now();
    const row: FolderRow = { id: newId("fold"), workspaceId: ws.id, name, nameKey: nameKey(name), noteCount: 0, createdAt: now, updatedAt: now };
    await deps.db.insert(folders).values(row);
    return toRecord(row);
  });
}

export async function renameFolder({ ctx, id, name: raw }: { ctx: Ctx; id: string; name: string }): Promise<Reply<FolderRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage folders");
  const name = cleanName(raw);
  const { deps } = ctx;
  return commit(ctx, 200, async () => {
    const row = await visibleFolder(ctx, id);
    await writableWorkspace(ctx);
    await assertNameFree(ctx, nameKey(name), row.id);
    const now = deps.clock.now();
    await deps.db.update(folders).set({ name, nameKey: nameKey(name), updatedAt: now }).where(eq(folders.id, row.id));
    return toRecord({ ...row, name, nameKey: nameKey(name), updatedAt: now });
  });
}

/** Deleting a folder keeps its notes: they become unfiled (ON DELETE SET NULL). */
export async function deleteFolder({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ id: string; deleted: true }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage folders");
  const { deps } = ctx;
  return commit(ctx, 200, async () => {
    const row = await visibleFolder(ctx, id);
    await writableWorkspace(ctx);
    await deps.db.delete(folders).where(eq(folders.id, row.id));
    return { id: row.id, deleted: true as const };
  });
}
