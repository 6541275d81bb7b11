import type { Deps } from "../../../deps";
import { sqlRows, sqlRun } from "../../../db/sql";
import { byteLength } from "../../../lib/text";
import type { AppendBatch } from "./batch";

// Retention drop_oldest at the append: a stream at its cap makes room for the line by dropping
// its oldest lines, stored or still in the batch, inside the append's write.

/**
 * What an append to a full `drop_oldest` stream removes first: every stored chunk up to
 * `lastSeq` (0: none), then the batch's `pending` oldest lines not stored yet.
 */
export interface Drop {
  bytes: number;
  lastSeq: number;
  pending: number;
}

/**
 * Which oldest lines must go to free `need` bytes, read without writing (it runs among an append's
 * checks): whole chunks in seq order from the (note_id, seq) index, counted only as far as they
 * are dropped, then the batch's own lines. Null when all of it is not enough, which only a
 * stream whose counted size is off can meet; the append is then refused as at any cap.
 */
export async function planDrop(deps: Deps, batch: AppendBatch, noteId: string, need: number): Promise<Drop | null> {
  let bytes = 0;
  let lastSeq = 0;
  // Pages of growing size: a drop usually needs only the oldest chunk or two.
  for (let size = 8; bytes < need; size = Math.min(size * 4, 1024)) {
    const page = await sqlRows<{ seq: number | string; bytes: number | string }>(
      deps.store,
      "SELECT seq, octet_length(text) AS bytes FROM note_chunks WHERE note_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      [noteId, lastSeq, size],
    );
    for (const c of page) {
      bytes += Number(c.bytes);
      lastSeq = Number(c.seq);
      if (bytes >= need) break;
    }
    if (page.length < size) break;
  }
  let pending = 0;
  const lines = bytes < need ? batch.pendingLines(noteId) : undefined;
  if (lines) while (bytes < need && pending < lines.length) bytes += byteLength(lines[pending++]!);
  return bytes >= need ? { bytes, lastSeq, pending } : null;
}

/** Removes what planDrop chose; the caller counts `drop.bytes` off the note and the workspace. */
export async function applyDrop(deps: Deps, batch: AppendBatch, noteId: string, drop: Drop): Promise<void> {
  if (drop.lastSeq !== 0) await sqlRun(deps.store, "DELETE FROM note_chunks WHERE note_id = ? AND seq <= ?", [noteId, drop.lastSeq]);
  if (drop.pending !== 0) batch.dropPending(noteId, drop.pending);
}
