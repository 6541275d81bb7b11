import type { Database } from "bun:sqlite";
import type { OverlayWrites } from "./batch";

/** SQLite's writes of a batch's overlay: statements prepared once, run on the writer's one connection. */
export function sqliteOverlayWrites(sqlite: Database): OverlayWrites {
  // One row per stream and batch: an INSERT per append cost far more than one per batch, and
  // readers only ever concatenate chunks (or split them into lines).
  const insert = sqlite.query("INSERT INTO note_chunks (note_id, text, at) VALUES (?, ?, ?)");
  // An armed dead-man's switch gets its next deadline from the same write time (a scheduled
  // stream's, computed by the batch, as ?4). A note without one skips that column, which spares
  // the deadline index a write per batch; should the note have been armed after all, the full
  // form runs.
  const plain = sqlite.query(
    "UPDATE notes SET byte_size = ?1, updated_at = ?2, last_write_at = ?2 WHERE id = ?3 AND expected_interval_seconds IS NULL AND schedule IS NULL",
  );
  const armed = sqlite.query(
    `UPDATE notes SET byte_size = ?1, updated_at = ?2, last_write_at = ?2,
       deadman_due_at = CASE WHEN schedule IS NOT NULL THEN ?4 WHEN expected_interval_seconds IS NULL THEN deadman_due_at ELSE ?2 + expected_interval_seconds * 1000 END
     WHERE id = ?3`,
  );
  const storage = sqlite.query("UPDATE workspaces SET storage_used = storage_used + ? WHERE id = ?");
  return {
    apply(chunks, notes, deltas) {
      for (const c of chunks) insert.run(c.noteId, c.text, c.at);
      for (const n of notes) {
        if (n.armed || n.dueAt !== undefined || plain.run(n.byteSize, n.at, n.id).changes === 0) armed.run(n.byteSize, n.at, n.id, n.dueAt ?? null);
      }
      for (const [id, delta] of deltas) storage.run(delta, id);
    },
  };
}
