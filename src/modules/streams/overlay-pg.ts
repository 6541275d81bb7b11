import type { ReservedSQL } from "bun";
import { CHANGES_CHANNEL } from "../../db/pg/other-writers";
import type { OverlayWrites } from "./batch";

/**
 * PostgreSQL's writes of a batch's overlay: one statement each for the chunks, the notes and the
 * workspaces of the whole batch (arrays unnested), on the writer's connection inside its
 * transaction, so a batch costs three round trips however many appends it holds, and a fourth
 * when it wrote lines: a notification, delivered at the commit, that wakes the followers of
 * every other instance (`instanceId`: the sender, which skips its own).
 */
export function pgOverlayWrites(conn: ReservedSQL, instanceId: string): OverlayWrites {
  return {
    async apply(chunks, notes, storage) {
      if (chunks.length > 0) {
        // Inserted in the order of the arrays: identity values (seq) follow it.
        await conn.unsafe(
          `INSERT INTO note_chunks (note_id, text, at)
           SELECT note_id, text, at FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS v(note_id, text, at, i) ORDER BY i`,
          [chunks.map((c) => c.noteId), chunks.map((c) => c.text), chunks.map((c) => c.at)],
        );
        await conn.unsafe("SELECT pg_notify($1, $2)", [CHANGES_CHANNEL, instanceId]);
      }
      if (notes.length > 0) {
        await conn.unsafe(
          `UPDATE notes AS n SET byte_size = v.size, updated_at = v.at, last_write_at = v.at,
             deadman_due_at = CASE WHEN n.expected_interval_seconds IS NULL THEN n.deadman_due_at ELSE v.at + n.expected_interval_seconds * 1000 END
           FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS v(id, size, at) WHERE n.id = v.id`,
          [notes.map((n) => n.id), notes.map((n) => n.byteSize), notes.map((n) => n.at)],
        );
      }
      if (storage.length > 0) {
        await conn.unsafe(
          `UPDATE workspaces AS w SET storage_used = w.storage_used + v.delta
           FROM unnest($1::text[], $2::bigint[]) AS v(id, delta) WHERE w.id = v.id`,
          [storage.map(([id]) => id), storage.map(([, d]) => d)],
        );
      }
    },
  };
}
