import { and, desc, eq, notInArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { snapshots } from "../../db/tables";
import { newId } from "../../lib/ids";
import type { NoteRow } from "../notes/repo";

export const MAX_SNAPSHOTS = 5;
/** Saves within ten minutes of each other share one snapshot. */
export const SNAPSHOT_DEBOUNCE_MS = 10 * 60 * 1000;

/**
 * A note's snapshots, newest first. A note's snapshots have distinct times (captureNow), so the
 * id only orders rows written before it made sure of that.
 */
export const newestFirst = [desc(snapshots.createdAt), desc(snapshots.id)];

/** The note's newest snapshot. */
function latestSnapshot(deps: Deps, noteId: string) {
  return deps.db
    .select({ id: snapshots.id, createdAt: snapshots.createdAt, lastSaveAt: snapshots.lastSaveAt })
    .from(snapshots)
    .where(eq(snapshots.noteId, noteId))
    .orderBy(...newestFirst)
    .limit(1);
}

/**
 * Called inside the write that saves an editable note, before the new content lands: keeps the
 * content as it was before this burst of saves. A save within ten minutes of the previous one
 * joins that snapshot instead of taking a new one.
 */
export async function captureBeforeSave(deps: Deps, note: NoteRow, now: number): Promise<void> {
  const [latest] = await latestSnapshot(deps, note.id);
  if (latest && now - latest.lastSaveAt < SNAPSHOT_DEBOUNCE_MS) {
    await deps.db.update(snapshots).set({ lastSaveAt: now }).where(eq(snapshots.id, latest.id));
    return;
  }
  await captureNow(deps, note, now);
}

/** Captures the note's current content as a fresh snapshot and evicts past the fifth. */
export async function captureNow(deps: Deps, note: NoteRow, now: number): Promise<string> {
  const id = newId("snap");
  // A millisecond after the newest when it was taken in the same one (a restore right after a
  // save): the newest is the one with the latest time, without relying on the order of insertion.
  const [latest] = await latestSnapshot(deps, note.id);
  const createdAt = latest && latest.createdAt >= now ? latest.createdAt + 1 : now;
  await deps.db.insert(snapshots).values({
    id,
    noteId: note.id,
    title: note.title,
    body: note.body ?? "",
    richHtml: note.richHtml,
    byteSize: note.byteSize,
    createdAt,
    lastSaveAt: now,
  });
  const keep = (
    await deps.db
      .select({ id: snapshots.id })
      .from(snapshots)
      .where(eq(snapshots.noteId, note.id))
      .orderBy(...newestFirst)
      .limit(MAX_SNAPSHOTS)
  ).map((r) => r.id);
  // The sixth and older are deleted permanently.
  await deps.db.delete(snapshots).where(and(eq(snapshots.noteId, note.id), notInArray(snapshots.id, keep)));
  return id;
}
