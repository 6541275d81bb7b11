import { Database } from "bun:sqlite";
import type { ReservedSQL, SQL } from "bun";

/** A workspace row as the manifest lists it. */
export interface SnapshotWorkspace {
  id: string;
  name: string;
  kind: string;
  plan: string;
}

export interface SnapshotNote {
  id: string;
  kind: string;
  format: string;
  title: string;
  filename: string | null;
  folder_id: string | null;
  /** An editable note's body; null for a stream (its text is its chunks). */
  body: string | null;
  byte_size: number;
  created_at: number;
  updated_at: number;
}

/**
 * One consistent, read-only view of the database while writes go on: what the export reads an
 * account from. Rows are streamed, so an account is never held in memory.
 */
export interface Snapshot {
  workspace(workspaceId: string): Promise<SnapshotWorkspace | undefined>;
  /** The workspace's folders, by name. */
  folders(workspaceId: string): Promise<{ id: string; name: string }[]>;
  /** The workspace's live notes (the trash left out), oldest first. */
  notes(workspaceId: string): AsyncIterable<SnapshotNote>;
  /** A stream's text, chunk by chunk in append order. */
  chunks(noteId: string): AsyncIterable<string>;
}

/** Runs `read` on a snapshot that lasts until it returns. */
export type SnapshotSource = <T>(read: (snapshot: Snapshot) => Promise<T>) => Promise<T>;

const NOTE_COLUMNS = `id, kind, format, title, filename, folder_id, CASE WHEN kind = 'editable' THEN body END AS body, byte_size, created_at, updated_at`;

/**
 * SQLite's: a read-only connection of its own to the database file, one read transaction
 * (`BEGIN`; everything committed so far is in the file or its WAL), rows streamed with iterate().
 */
export function sqliteSnapshots(dbPath: string): SnapshotSource {
  return async (read) => {
    const db = new Database(dbPath, { readonly: true });
    try {
      db.run("BEGIN");
      const chunks = db.query<{ text: string }, [string]>("SELECT text FROM note_chunks WHERE note_id = ? ORDER BY seq");
      const result = await read({
        workspace: async (id) => db.query<SnapshotWorkspace, [string]>("SELECT id, name, kind, plan FROM workspaces WHERE id = ?").get(id) ?? undefined,
        folders: async (id) => db.query<{ id: string; name: string }, [string]>("SELECT id, name FROM folders WHERE workspace_id = ? ORDER BY name_key").all(id),
        notes: async function* (id) {
          yield* db.query<SnapshotNote, [string]>(`SELECT ${NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND trashed_at IS NULL ORDER BY created_at, id`).iterate(id);
        },
        chunks: async function* (noteId) {
          for (const c of chunks.iterate(noteId)) yield c.text;
        },
      });
      db.run("COMMIT");
      return result;
    } finally {
      db.close();
    }
  };
}

/** Rows per round trip: notes carry their bodies, chunks can be large, so few at a time. */
const NOTE_BATCH = 32;
const CHUNK_BATCH = 16;

/**
 * PostgreSQL's: one connection reserved from the pool for the export, in a REPEATABLE READ,
 * READ ONLY transaction (one snapshot for every statement in it), given back when `read` returns.
 * Rows come in batches by key (the snapshot keeps the pages consistent); bigint columns arrive
 * as strings and are read with Number().
 */
export function pgSnapshots(pool: SQL): SnapshotSource {
  return async (read) => {
    const conn: ReservedSQL = await pool.reserve();
    try {
      await conn.unsafe("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      try {
        const result = await read({
          workspace: async (id) => ((await conn.unsafe("SELECT id, name, kind, plan FROM workspaces WHERE id = $1", [id])) as SnapshotWorkspace[])[0],
          folders: async (id) => [...((await conn.unsafe("SELECT id, name FROM folders WHERE workspace_id = $1 ORDER BY name_key", [id])) as { id: string; name: string }[])],
          notes: async function* (id) {
            let after: [number, string] | null = null;
            for (;;) {
              const rows = (await (after
                ? conn.unsafe(
                    `SELECT ${NOTE_COLUMNS} FROM notes WHERE workspace_id = $1 AND trashed_at IS NULL AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT ${NOTE_BATCH}`,
                    [id, after[0], after[1]],
                  )
                : conn.unsafe(`SELECT ${NOTE_COLUMNS} FROM notes WHERE workspace_id = $1 AND trashed_at IS NULL ORDER BY created_at, id LIMIT ${NOTE_BATCH}`, [
                    id,
                  ]))) as Record<string, unknown>[];
              for (const r of rows) {
                yield { ...(r as unknown as SnapshotNote), byte_size: Number(r.byte_size), created_at: Number(r.created_at), updated_at: Number(r.updated_at) };
              }
              if (rows.length < NOTE_BATCH) return;
              const last = rows[rows.length - 1]!;
              after = [Number(last.created_at), last.id as string];
            }
          },
          chunks: async function* (noteId) {
            let after = 0;
            for (;;) {
              const rows = (await conn.unsafe(`SELECT seq, text FROM note_chunks WHERE note_id = $1 AND seq > $2 ORDER BY seq LIMIT ${CHUNK_BATCH}`, [
                noteId,
                after,
              ])) as { seq: string; text: string }[];
              for (const r of rows) yield r.text;
              if (rows.length < CHUNK_BATCH) return;
              after = Number(rows[rows.length - 1]!.seq);
            }
          },
        });
        await conn.unsafe("COMMIT");
        return result;
      } catch (e) {
        await conn.unsafe("ROLLBACK").catch(() => {});
        throw e;
      }
    } finally {
      void conn.release();
    }
  };
}
