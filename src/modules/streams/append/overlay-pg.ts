import type { ReservedSQL } from "bun";
import { CHANGES_CHANNEL } from "../../../db/pg/other-writers";
import type { OverlayWrites } from "./batch";

/**
 * PostgreSQL's writes of a batch's overlay: the whole batch's chunks, note counters and workspace
 * storage in ONE statement (data-modifying CTEs over unnested arrays), on the writer's connection
 * inside its transaction, and a notification, delivered at the commit, that wakes the followers of
 * every other instance (`instanceId`: the sender, which skips its own). A batch is a few round
 * trips whatever it holds: this one, its rows' locks, and the commit (measured: the round trips,
 * not PostgreSQL's work, bound a batch; docs/PERFORMANCE.md). A chunk goes without its search
 * vector: the search indexer sets it after the commit (src/modules/search/indexer.ts).
 */
export function pgOverlayWrites(conn: ReservedSQL, instanceId: string): OverlayWrites {
  return {
    async apply(chunks, notes, storage) {
      await conn.unsafe(
        `WITH c AS (
           INSERT INTO note_chunks (note_id, text, at)
           SELECT note_id, text, at
           FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS v(note_id, text, at, i) ORDER BY i
           RETURNING 1
         ), n AS (
           UPDATE notes AS n SET byte_size = v.size, updated_at = v.at, last_write_at = v.at,
             deadman_due_at = CASE WHEN n.schedule IS NOT NULL THEN v.due
               WHEN n.expected_interval_seconds IS NULL THEN n.deadman_due_at ELSE v.at + n.expected_interval_seconds * 1000 END
           FROM unnest($4::text[], $5::bigint[], $6::bigint[], $11::bigint[]) AS v(id, size, at, due) WHERE n.id = v.id
           RETURNING 1
         ), w AS (
           UPDATE workspaces AS w SET storage_used = w.storage_used + v.delta
           FROM unnest($7::text[], $8::bigint[]) AS v(id, delta) WHERE w.id = v.id
           RETURNING 1
         )
         SELECT pg_notify($9, $10) WHERE EXISTS (SELECT 1 FROM c)`,
        [
          chunks.map((c) => c.noteId),
          chunks.map((c) => c.text),
          chunks.map((c) => c.at),
          notes.map((n) => n.id),
          notes.map((n) => n.byteSize),
          notes.map((n) => n.at),
          storage.map(([id]) => id),
          storage.map(([, d]) => d),
          CHANGES_CHANNEL,
          instanceId,
          // A scheduled stream's deadline, computed by the batch (overlay's dueAt); null otherwise.
          notes.map((n) => n.dueAt ?? null),
        ],
      );
    },
  };
}
