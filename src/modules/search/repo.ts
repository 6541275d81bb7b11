import type { Deps } from "../../deps";
import type { Page } from "../../lib/pagination";

/** Where a note's best match is: one of a stream's chunks, or its row of titles and bodies. */
export const Source = { Chunk: 0, Note: 1 } as const;
export type Source = (typeof Source)[keyof typeof Source];

export interface HitRow {
  id: string;
  kind: "stream" | "editable";
  format: "plain" | "rich";
  filename: string | null;
  title: string;
  folderId: string | null;
  byteSize: number;
  updatedAt: number;
  src: Source;
  /** The chunk's seq, or the search_notes rowid. */
  rid: number;
  total: number;
}

export interface HitFilter {
  workspaceId: string;
  /** A pinned token's note: nothing else is found. */
  noteId: string | null;
  folderId: string | null;
}

/** Marks the index puts around a matched token: Unicode noncharacters, which no text is meant to hold. */
export const OPEN = "\uFDD0";
export const CLOSE = "\uFDD1";
const WORDS = 16;

/** The full-text index's queries: the one place that knows how the database indexes text. */
export interface SearchIndex {
  /**
   * One page of matching notes and how many match in all; `match` is the expression for the
   * chunks and for the notes' row of titles and bodies (terms.ts).
   */
  hits(deps: Deps, match: { chunks: string; notes: string }, filter: HitFilter, page: Page): Promise<{ rows: HitRow[]; total: number }>;
  /** The best passage of one chunk, matches marked. */
  chunkSnippet(deps: Deps, match: string, seq: number): Promise<string>;
  /** The best passage of a note's body, and its title marked, from its row of titles and bodies. */
  noteSnippets(deps: Deps, match: string, rowid: number): Promise<{ title: string; body: string }>;
}

/*
 * SQLite only: everything below is FTS5 (the search_chunks and search_notes tables of
 * migrations/0013_search.sql, MATCH, bm25(), snippet(), their rowids, a bare column beside min()),
 * run as SQLite's own SQL on its connection. PostgreSQL gets its own SearchIndex (tsvector and
 * GIN, docs/SCALING.md) beside this one.
 */

/**
 * Each note once, at its best match: bm25 over the chunks (a stream's lines) and over the row
 * of titles and bodies, the lowest (best) score of a note's rows kept with where it was (a
 * bare column beside min() takes that row's value in SQLite). A title match weighs four times
 * a body match. Trashed notes stay indexed (a restore brings them back as they were) and are
 * left out here, as are other workspaces' notes, should a workspace term ever be shared.
 */
const BEST = `
WITH hits(note_id, score, src, rid) AS (
  SELECT c.note_id, bm25(search_chunks, 1.0, 0.0), ${Source.Chunk}, c.seq
    FROM search_chunks JOIN note_chunks c ON c.seq = search_chunks.rowid
    WHERE search_chunks MATCH ?1
  UNION ALL
  SELECT note_id, bm25(search_notes, 4.0, 1.0, 0.0, 0.0, 0.0), ${Source.Note}, rowid
    FROM search_notes
    WHERE search_notes MATCH ?2
),
best AS (SELECT note_id, min(score) AS score, src, rid FROM hits GROUP BY note_id)`;

const VISIBLE = `n.workspace_id = ?3 AND n.trashed_at IS NULL AND (?4 IS NULL OR n.id = ?4) AND (?5 IS NULL OR n.folder_id = ?5)`;

// CROSS JOIN keeps the matches as the outer loop, each note found by its key: left to itself the
// planner walks every note of the workspace by its index and probes the matches for each.
const PAGE_SQL = `${BEST}
SELECT n.id, n.kind, n.format, n.filename, n.title, n.folder_id AS folderId, n.byte_size AS byteSize, n.updated_at AS updatedAt,
       best.src AS src, best.rid AS rid, count(*) OVER () AS total
  FROM best CROSS JOIN notes n ON n.id = best.note_id
  WHERE ${VISIBLE}
  ORDER BY best.score, n.updated_at DESC, n.id
  LIMIT ?6 OFFSET ?7`;

const COUNT_SQL = `${BEST}
SELECT count(*) AS n FROM best CROSS JOIN notes n ON n.id = best.note_id WHERE ${VISIBLE}`;

type Params = [string, string, string, string | null, string | null];

/** SQLite only: FTS5's index (see above). */
export const sqliteSearch: SearchIndex = {
  // The total rides on the page's rows (a window count), so the index is read once; only a page
  // past the end counts separately.
  async hits(deps, match, filter, page) {
    const sqlite = deps.db.$client;
    const params: Params = [match.chunks, match.notes, filter.workspaceId, filter.noteId, filter.folderId];
    const rows = sqlite.query<HitRow, [...Params, number, number]>(PAGE_SQL).all(...params, page.limit, page.offset);
    if (rows.length > 0) return { rows, total: rows[0]!.total };
    const total = page.offset === 0 ? 0 : sqlite.query<{ n: number }, Params>(COUNT_SQL).get(...params)!.n;
    return { rows, total };
  },

  async chunkSnippet(deps, match, seq) {
    const row = deps.db.$client
      .query<{ s: string | null }, [string, string, string, number]>(
        `SELECT snippet(search_chunks, 0, ?1, ?2, '…', ${WORDS}) AS s FROM search_chunks WHERE search_chunks MATCH ?3 AND rowid = ?4`,
      )
      .get(OPEN, CLOSE, match, seq);
    return row?.s ?? "";
  },

  async noteSnippets(deps, match, rowid) {
    const row = deps.db.$client
      .query<{ title: string | null; body: string | null }, [string, string, string, number]>(
        `SELECT snippet(search_notes, 0, ?1, ?2, '…', ${WORDS}) AS title, snippet(search_notes, 1, ?1, ?2, '…', ${WORDS}) AS body
           FROM search_notes WHERE search_notes MATCH ?3 AND rowid = ?4`,
      )
      .get(OPEN, CLOSE, match, rowid);
    return { title: row?.title ?? "", body: row?.body ?? "" };
  },
};
