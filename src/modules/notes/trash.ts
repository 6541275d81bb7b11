import { and, desc, eq, getTableColumns, isNotNull, isNull, lte, sql } from "drizzle-orm";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { mayNameRow } from "../../db/keys";
import { paged } from "../../db/paged";
import { notes, tokens } from "../../db/tables";
import type { Ctx, Deps } from "../../deps";
import { NotFound } from "../../http/errors";
import { DAY_MS, iso } from "../../lib/clock";
import type { Page } from "../../lib/pagination";
import { deadlineAfterSql } from "../deadman/deadline";
import { scheduledDeadline, scheduleOf } from "../deadman/schedule";
import { inboxBodyBytes } from "../inbox/storage";
import { requireScope, requireUnpinned, seesNote } from "../tokens/service";
import { assertNoteSlots, assertStorage } from "../workspaces/caps";
import { addStorage, assertWritable, getWorkspace, tierOf } from "../workspaces/repo";
import type { NoteRecord, TrashedNote } from "./model";
import { toRecord, visibleNote, type NoteRow } from "./repo";

/**
 * The trash, one rule for every way in (a user's DELETE, the end of a trial) and out (a restore,
 * a subscription):
 * - a trashed note is hidden from every reader (visibleNote and the lists filter it): its inbox
 *   URL answers 404, its webhook and dead-man's switch are silent, tokens pinned to it see nothing;
 * - it keeps all of that for a restore; a stream gives up its filename, so the name can be
 *   appended to again (a new stream), and gets it back on restore unless that stream took it;
 * - it counts against no note cap, but its bytes (inbox bodies included) stay in the workspace's
 *   storage until the purge, TRASH_DAYS after trashing (or at once: DELETE /trash/{id}), deletes
 *   its rows and frees them.
 */
export const TRASH_DAYS = 30;
const TRASH_MS = TRASH_DAYS * DAY_MS;
/** Notes purged per run: one run is one write, and appends wait for it. */
const PURGE_BATCH = 200;

/** Inside a write: nothing is deleted, so a restore finds it all; the filename is free for a new stream. */
export async function moveToTrash(deps: Deps, noteId: string, now: number): Promise<void> {
  await deps.db
    .update(notes)
    .set({ trashedAt: now, trashedFilename: sql`${notes.filename}`, filename: null })
    .where(and(eq(notes.id, noteId), isNull(notes.trashedAt)));
}

export type TrashedRow = Pick<NoteRow, "id" | "workspaceId" | "trashedFilename" | "schedule" | "timezone" | "graceSeconds">;
/** The columns of a TrashedRow, for a select. */
export const trashedRowColumns = {
  id: notes.id,
  workspaceId: notes.workspaceId,
  trashedFilename: notes.trashedFilename,
  schedule: notes.schedule,
  timezone: notes.timezone,
  graceSeconds: notes.graceSeconds,
};

/**
 * Inside a write: out of the trash, with its filename unless another stream took it meanwhile
 * (then it is reachable by id). An armed dead-man's switch counts from now: the silence of a
 * note nobody could write to is not the stream's.
 */
export async function takeOutOfTrash(deps: Deps, note: TrashedRow, now: number): Promise<void> {
  const name = note.trashedFilename;
  const [holder] =
    name === null
      ? []
      : await deps.db
          .select({ id: notes.id })
          .from(notes)
          .where(and(eq(notes.workspaceId, note.workspaceId), eq(notes.filename, name)))
          .limit(1);
  await deps.db
    .update(notes)
    .set({
      trashedAt: null,
      filename: holder ? null : name,
      trashedFilename: null,
      deadmanDueAt: sql`CASE WHEN ${notes.deadmanStatus} = 'ok' THEN ${restoredDeadline(note, now)} ELSE ${notes.deadmanDueAt} END`,
    })
    .where(eq(notes.id, note.id));
}

/** A restored stream is watched as if just armed: its interval, or its schedule's next time, counts from now. */
function restoredDeadline(note: TrashedRow, now: number) {
  const schedule = scheduleOf(note);
  return schedule === null ? deadlineAfterSql(now) : sql`${scheduledDeadline(schedule, now)}`;
}

const { body: _body, richHtml: _richHtml, ...trashColumns } = getTableColumns(notes);
type TrashRow = Omit<NoteRow, "body" | "richHtml">;

/** A trashed note as the API shows it: the filename it had, when it went and when it will be purged. */
function trashRecord(ctx: Ctx, row: TrashRow): TrashedNote {
  const trashedAt = row.trashedAt!;
  return {
    ...toRecord(ctx, { ...row, filename: row.trashedFilename ?? row.filename }),
    trashed_at: iso(trashedAt),
    purge_at: iso(trashedAt + TRASH_MS),
  };
}

/** GET /trash: the workspace's trashed notes, most recently trashed first. */
export async function listTrash({ ctx, page }: { ctx: Ctx; page: Page }): Promise<{ items: TrashedNote[]; total: number }> {
  requireScope(ctx, "read");
  requireUnpinned(ctx, "list the trash");
  const where = and(eq(notes.workspaceId, ctx.principal.workspaceId), isNotNull(notes.trashedAt));
  const rows = ctx.deps.db.select(trashColumns).from(notes).where(where).orderBy(desc(notes.trashedAt), desc(notes.id));
  // Its size is kept on the workspace's row (migrations/0018).
  const kept = (await getWorkspace(ctx.deps, ctx.principal.workspaceId)).trashedNotes;
  const { items, total } = await paged(ctx.deps.db, { from: notes, where, rows, page, kept });
  return { items: items.map((r) => trashRecord(ctx, r)), total };
}

/** A note of the caller's trash (a pinned token's own note only); anything else is the same 404. */
async function trashedNote(ctx: Ctx, id: string): Promise<TrashedRow & Pick<NoteRow, "format" | "byteSize">> {
  if (!seesNote(ctx.principal, id) || !mayNameRow(id)) throw new NotFound("note in the trash");
  const [row] = await ctx.deps.db
    .select({ ...trashedRowColumns, format: notes.format, byteSize: notes.byteSize })
    .from(notes)
    .where(and(eq(notes.id, id), eq(notes.workspaceId, ctx.principal.workspaceId), isNotNull(notes.trashedAt)));
  if (!row) throw new NotFound("note in the trash");
  return row;
}

/** POST /notes/{id}/restore: back from the trash, if the workspace has room for it. */
export async function restoreNote({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  const { deps } = ctx;
  return commit(ctx, 200, async () => {
    const note = await trashedNote(ctx, id);
    const ws = assertWritable(await getWorkspace(deps, note.workspaceId));
    const tier = tierOf(deps, ws);
    await assertNoteSlots(deps, ws, tier, note.format);
    // Its bytes never left the storage count: there is room for them while the workspace is
    // within its cap (a plan with less room may have put it over).
    const bytes = note.byteSize + (await inboxBodyBytes(deps, note.id));
    assertStorage(ws, tier, bytes, ws.storageUsed - bytes);
    await takeOutOfTrash(deps, note, deps.clock.now());
    return toRecord(ctx, await visibleNote(ctx, note.id));
  });
}

/**
 * The periodic purge: notes trashed TRASH_DAYS ago or more are deleted for good, with their
 * chunks, snapshots, inbox payloads and webhook attempts (ON DELETE CASCADE); their bytes and
 * their inbox bodies' leave the storage count, and tokens pinned to them are revoked (they would
 * see nothing again, yet hold a place under the plan's token cap).
 */
export async function purgeTrash(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db
    .select({ id: notes.id, workspaceId: notes.workspaceId, byteSize: notes.byteSize })
    .from(notes)
    .where(lte(notes.trashedAt, now - TRASH_MS))
    .limit(PURGE_BATCH);
  for (const n of due) await purge(deps, n, now);
  if (due.length) deps.tokens.clear();
  return due.length;
}

/**
 * DELETE /trash/{id}: the purge, now rather than TRASH_DAYS after trashing, for a note of the
 * caller's trash (404 otherwise). It frees room, so it runs on a full disk too (db/disk-space.ts).
 */
export async function purgeNote({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ id: string; purged: true }>> {
  requireScope(ctx, "write");
  const { deps } = ctx;
  return commit(
    ctx,
    200,
    async () => {
      const note = await trashedNote(ctx, id);
      assertWritable(await getWorkspace(deps, note.workspaceId));
      await purge(deps, note, deps.clock.now());
      deps.tokens.clear();
      return { id: note.id, purged: true as const };
    },
    { freesSpace: true },
  );
}

/** Inside a write: one trashed note deleted for good (its rows go by ON DELETE CASCADE), its bytes freed, tokens pinned to it revoked. */
async function purge(deps: Deps, n: Pick<NoteRow, "id" | "workspaceId" | "byteSize">, now: number): Promise<void> {
  const bytes = n.byteSize + (await inboxBodyBytes(deps, n.id));
  await deps.db.delete(notes).where(eq(notes.id, n.id));
  await addStorage(deps, n.workspaceId, -bytes);
  await deps.db
    .update(tokens)
    .set({ revokedAt: now })
    .where(and(eq(tokens.noteId, n.id), isNull(tokens.revokedAt)));
}
