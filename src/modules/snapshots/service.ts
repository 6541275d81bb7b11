import { and, eq } from "drizzle-orm";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { mayNameRow } from "../../db/keys";
import type { Ctx } from "../../deps";
import { notes, snapshots } from "../../db/tables";
import { NoteLocked, NotFound } from "../../http/errors";
import { iso } from "../../lib/clock";
import type { NoteRecord } from "../notes/model";
import { toRecord as noteRecord, visibleNote, type NoteRow } from "../notes/repo";
import { writableWorkspace } from "../notes/service";
import { requireScope } from "../tokens/service";
import { assertNoteSize, assertStorage } from "../workspaces/caps";
import { addStorage, tierOf } from "../workspaces/repo";
import { captureNow, newestFirst } from "./capture";
import type { SnapshotRecord } from "./model";

type SnapshotRow = typeof snapshots.$inferSelect;

function toRecord(row: Omit<SnapshotRow, "body" | "richHtml">, body?: string): SnapshotRecord {
  return {
    id: row.id,
    note_id: row.noteId,
    title: row.title,
    byte_size: row.byteSize,
    created_at: iso(row.createdAt),
    ...(body === undefined ? {} : { plain_body: body }),
  };
}

/** Newest first. Streams have none: they never snapshot. */
export async function listSnapshots({ ctx, noteId }: { ctx: Ctx; noteId: string }): Promise<SnapshotRecord[]> {
  requireScope(ctx, "read");
  const note = await visibleNote(ctx, noteId);
  const rows = await ctx.deps.db
    .select({
      id: snapshots.id,
      noteId: snapshots.noteId,
      title: snapshots.title,
      byteSize: snapshots.byteSize,
      createdAt: snapshots.createdAt,
      lastSaveAt: snapshots.lastSaveAt,
    })
    .from(snapshots)
    .where(eq(snapshots.noteId, note.id))
    .orderBy(...newestFirst);
  return rows.map((r) => toRecord(r));
}

/** A snapshot of a note the caller sees (from visibleNote); another note's snapshot is the same 404 as a missing one. */
async function visibleSnapshot(ctx: Ctx, note: NoteRow, snapshotId: string): Promise<SnapshotRow> {
  if (!mayNameRow(snapshotId)) throw new NotFound("snapshot");
  const [row] = await ctx.deps.db
    .select()
    .from(snapshots)
    .where(and(eq(snapshots.id, snapshotId), eq(snapshots.noteId, note.id)));
  if (!row) throw new NotFound("snapshot");
  return row;
}

export async function getSnapshot({ ctx, noteId, snapshotId }: { ctx: Ctx; noteId: string; snapshotId: string }): Promise<SnapshotRecord> {
  requireScope(ctx, "read");
  const row = await visibleSnapshot(ctx, await visibleNote(ctx, noteId), snapshotId);
  return toRecord(row, row.body);
}

/** One snapshot as the browser previews it: a rich note's version with its (sanitised) HTML too. */
export async function previewSnapshot({
  ctx,
  noteId,
  snapshotId,
}: {
  ctx: Ctx;
  noteId: string;
  snapshotId: string;
}): Promise<SnapshotRecord & { rich_html: string | null }> {
  requireScope(ctx, "read");
  const note = await visibleNote(ctx, noteId);
  const row = await visibleSnapshot(ctx, note, snapshotId);
  return { ...toRecord(row, row.body), rich_html: note.format === "rich" ? row.richHtml : null };
}

/** Restores a snapshot; the current content is captured first, so the restore can be undone. */
export async function restoreSnapshot({ ctx, noteId, snapshotId }: { ctx: Ctx; noteId: string; snapshotId: string }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  const { deps } = ctx;
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, noteId);
    const snap = await visibleSnapshot(ctx, note, snapshotId);
    // The API never writes rich notes; the browser (a session) may restore them.
    if (note.format === "rich" && ctx.principal.tokenId !== "session") throw new NoteLocked("rich-text notes are restored in the browser");
    const ws = await writableWorkspace(ctx);
    const tier = tierOf(deps, ws);
    assertNoteSize(tier, note.format, snap.byteSize, note.byteSize);
    const delta = snap.byteSize - note.byteSize;
    assertStorage(ws, tier, delta);
    const now = deps.clock.now();
    await captureNow(deps, note, now);
    await deps.db
      .update(notes)
      .set({ title: snap.title, body: snap.body, richHtml: note.format === "rich" ? snap.richHtml : note.richHtml, byteSize: snap.byteSize, updatedAt: now, lastWriteAt: now })
      .where(eq(notes.id, note.id));
    await addStorage(deps, ws.id, delta);
    const restored = { ...note, title: snap.title, body: snap.body, byteSize: snap.byteSize, updatedAt: now, lastWriteAt: now };
    return noteRecord(ctx, restored, snap.body);
  });
}
