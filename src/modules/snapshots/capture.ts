import { and, desc, eq, notInArray, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { snapshots } from "../../db/schema";
import { newId } from "../../lib/ids";
import type { NoteRow } from "../notes/repo";

export const MAX_SNAPSHOTS = 5;
/** Saves within ten minutes of each other share one snapshot. */
export const SNAPSHOT_DEBOUNCE_MS = 10 * 60 * 1000;

/**
 * Called inside the write that saves an editable note, before the new content lands: keeps the
 * content as it was before this burst of saves. A save within ten minutes of the previous one
 * joins that snapshot instead of taking a new one.
 */
export function captureBeforeSave(deps: Deps, note: NoteRow, now: number): void {
  const latest = deps.db
    .select({ id: snapshots.id, lastSaveAt: snapshots.lastSaveAt })
    .from(snapshots)
    .where(eq(snapshots.noteId, note.id))
    .orderBy(desc(snapshots.createdAt), desc(sql`rowid`))
    .get();
  if (latest && now - latest.lastSaveAt < SNAPSHOT_DEBOUNCE_MS) {
    deps.db.update(snapshots).set({ lastSaveAt: now }).where(eq(snapshots.id, latest.id)).run();
    return;
  }
  captureNow(deps, note, now);
}

/** Captures the note's current content as a fresh snapshot and evicts past the fifth. */
export function captureNow(deps: Deps, note: NoteRow, now: number): string {
  const id = newId("snap");
  deps.db
    .insert(snapshots)
    .values({
      id,
      noteId: note.id,
      title: note.title,
      body: note.body ?? "",
      richHtml: note.richHtml,
      byteSize: note.byteSize,
      createdAt: now,
      lastSaveAt: now,
    })
    .run();
  const keep = deps.db
    .select({ id: snapshots.id })
    .from(snapshots)
    .where(eq(snapshots.noteId, note.id))
    .orderBy(desc(snapshots.createdAt), desc(sql`rowid`))
    .limit(MAX_SNAPSHOTS)
    .all()
    .map((r) => r.id);
  // The sixth and older are deleted permanently.
  deps.db.delete(snapshots).where(and(eq(snapshots.noteId, note.id), notInArray(snapshots.id, keep))).run();
  return id;
}
