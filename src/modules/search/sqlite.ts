import type { Db } from "../../db/client";
import { CLOSE, OPEN, SNIPPET_WORDS as WORDS, SEARCH_CANDIDATES, Source, type HitRow, type SearchIndex } from "./engine";
import { matchExpression } from "./terms";

/*
 * SQLite's search index: FTS5 (the search_chunks and search_notes tables of
 * migrations/0013_search.sql, MATCH, bm25(), snippet(), their rowids, a bare column beside min()),
 * run as SQLite's own SQL on its connection. A stream's chunks are in search_chunks once the
 * indexer has taken them (indexer.ts, migrations/0019). PostgreSQL's engine is postgres.ts.
 */

const VISIBLE = `n.workspace_id = ?3 AND n.trashed_at IS NULL AND (?4 IS NULL OR n.id = ?4) AND (?5 IS NULL OR n.folder_id = ?5)`;

/**
 * A word in more rows of an index than this, all workspaces' together, is searched newest first
 * rather than ranked: bm25 weighs each word by how many rows hold it (its IDF), which FTS5 counts
 * by reading all of them, so ranking a common word costs time in proportion to its rows.
 */
export const RANKED_WORD_ROWS = 100_000;

/** How a search reads the index (sqliteSearch.hits decides, for each search). */
interface Plan {
  /** More rows of the workspace match than SEARCH_CANDIDATES: walk chunks (notes) newest first. */
  newestChunks: boolean;
  newestNotes: boolean;
  /** Every word is in at most RANKED_WORD_ROWS rows of each index: the candidates are ranked by bm25. */
  ranked: boolean;
}

/**
 * The candidates (SEARCH_CANDIDATES of each kind): the newest matching chunks (a chunk's rowid is
 * its seq, in append order) and notes' rows of titles and bodies (rowids in the order the notes
 * were made) that the caller may see, found through the expressions with the workspace's term
 * (?1, ?2). Trashed notes stay indexed (a restore brings them back as they were) and are left out
 * here. CROSS JOIN keeps the index the outer loop, each row's note found by its key. When more
 * rows match than the bound, the index is walked newest first and stops at it; otherwise every
 * match is a candidate, read in the index's own order (walking backwards, FTS5 cannot skip
 * through the workspace term's postings to a rare word's few rows, and reads them all).
 *
 * Ranked, each candidate is scored by bm25 through the expressions without the workspace's term
 * (?6, ?7): its IDF would cost a read of every row of the workspace, and it weighs nothing in the
 * score (its column's weight is 0). Only the candidates are scored: their range of rowids is read
 * from the index, the other rows of it filtered out before bm25 is asked (the unary + keeps `IN`
 * from becoming one lookup, and one count, per row). A title match weighs four times a body match.
 * Not ranked, a note's newest chunk stands for it (else its row of titles and bodies).
 *
 * Then each note once, at its best match: the lowest score of its rows, kept with where it was (a
 * bare column beside min() takes that row's value in SQLite).
 */
function best(plan: Plan): string {
  const bound = (newest: boolean, table: string) => (newest ? `ORDER BY ${table}.rowid DESC LIMIT ${SEARCH_CANDIDATES}` : "");
  const scores = plan.ranked
    ? `chunk_scores(seq, score) AS MATERIALIZED (
  SELECT rowid, bm25(search_chunks, 1.0, 0.0) FROM search_chunks
    WHERE search_chunks MATCH ?6 AND rowid >= (SELECT coalesce(min(seq), ${Number.MAX_SAFE_INTEGER}) FROM chunk_rows)
      AND +rowid IN (SELECT seq FROM chunk_rows)
),
note_scores(rid, score) AS MATERIALIZED (
  SELECT rowid, bm25(search_notes, 4.0, 1.0, 0.0, 0.0, 0.0) FROM search_notes
    WHERE search_notes MATCH ?7 AND rowid >= (SELECT coalesce(min(rid), ${Number.MAX_SAFE_INTEGER}) FROM note_rows)
      AND +rowid IN (SELECT rid FROM note_rows)
)`
    : `chunk_scores(seq, score) AS (SELECT seq, -seq FROM chunk_rows),
note_scores(rid, score) AS (SELECT rid, 0 FROM note_rows)`;
  return `
WITH chunk_rows(seq, note_id) AS MATERIALIZED (
  SELECT search_chunks.rowid, c.note_id
    FROM search_chunks CROSS JOIN note_chunks c ON c.seq = search_chunks.rowid CROSS JOIN notes n ON n.id = c.note_id
    WHERE search_chunks MATCH ?1 AND ${VISIBLE}
    ${bound(plan.newestChunks, "search_chunks")}
),
note_rows(rid, note_id) AS MATERIALIZED (
  SELECT search_notes.rowid, search_notes.note_id
    FROM search_notes CROSS JOIN notes n ON n.id = search_notes.note_id
    WHERE search_notes MATCH ?2 AND ${VISIBLE}
    ${bound(plan.newestNotes, "search_notes")}
),
${scores},
hits(note_id, score, src, rid) AS (
  SELECT chunk_rows.note_id, chunk_scores.score, ${Source.Chunk}, chunk_rows.seq FROM chunk_rows JOIN chunk_scores USING (seq)
  UNION ALL
  SELECT note_rows.note_id, note_scores.score, ${Source.Note}, note_rows.rid FROM note_rows JOIN note_scores USING (rid)
),
best AS (SELECT note_id, min(score) AS score, src, rid FROM hits GROUP BY note_id)`;
}

/** Ranked: best first, then the most recently changed; otherwise the most recently changed first. */
const pageSql = (plan: Plan) => `${best(plan)}
SELECT n.id, n.kind, n.format, n.filename, n.title, n.folder_id AS folderId, n.byte_size AS byteSize, n.updated_at AS updatedAt,
       best.src AS src, best.rid AS rid, count(*) OVER () AS total
  FROM best CROSS JOIN notes n ON n.id = best.note_id
  ORDER BY ${plan.ranked ? "best.score, " : ""}n.updated_at DESC, n.id
  LIMIT ?8 OFFSET ?9`;

const countSql = (plan: Plan) => `${best(plan)}
SELECT count(*) AS n FROM best`;

/** More than `bound` rows of the index match the expression: read forwards, which skips, and stops there. */
function matchesMoreThan(sqlite: Db["$client"], table: "search_chunks" | "search_notes", expression: string, bound: number): boolean {
  const q = `SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH ? LIMIT ${bound + 1})`;
  return sqlite.query<{ n: number }, [string]>(q).get(expression)!.n > bound;
}

type Params = [string, string, string, string | null, string | null, string, string];

/** SQLite only: FTS5's index (see above). */
export const sqliteSearch: SearchIndex<{ words: readonly string[]; chunks: string; notes: string; chunkWords: string; noteWords: string }> = {
  // The FTS5 expressions for the chunks and for the notes' row of titles and bodies (terms.ts).
  // Each also without the workspace's term, for bm25 (BEST).
  match(words, workspaceId) {
    return {
      words,
      chunks: matchExpression(words, "text", workspaceId),
      notes: matchExpression(words, "{title body}", workspaceId),
      chunkWords: matchExpression(words, "text"),
      noteWords: matchExpression(words, "{title body}"),
    };
  },

  // The total rides on the page's rows (a window count), so the index is read once; only a page
  // past the end counts separately.
  async hits(deps, match, filter, page) {
    const sqlite = deps.db.$client;
    const params: Params = [match.chunks, match.notes, filter.workspaceId, filter.noteId, filter.folderId, match.chunkWords, match.noteWords];
    const plan: Plan = {
      newestChunks: matchesMoreThan(sqlite, "search_chunks", match.chunks, SEARCH_CANDIDATES),
      newestNotes: matchesMoreThan(sqlite, "search_notes", match.notes, SEARCH_CANDIDATES),
      ranked: match.words.every(
        (w) =>
          !matchesMoreThan(sqlite, "search_chunks", matchExpression([w], "text"), RANKED_WORD_ROWS) &&
          !matchesMoreThan(sqlite, "search_notes", matchExpression([w], "{title body}"), RANKED_WORD_ROWS),
      ),
    };
    const rows = sqlite.query<HitRow, [...Params, number, number]>(pageSql(plan)).all(...params, page.limit, page.offset);
    if (rows.length > 0) return { rows, total: rows[0]!.total };
    const total = page.offset === 0 ? 0 : sqlite.query<{ n: number }, Params>(countSql(plan)).get(...params)!.n;
    return { rows, total };
  },

  async chunkSnippet(deps, match, hit) {
    const row = deps.db.$client
      .query<{ s: string | null }, [string, string, string, number]>(
        `SELECT snippet(search_chunks, 0, ?1, ?2, '…', ${WORDS}) AS s FROM search_chunks WHERE search_chunks MATCH ?3 AND rowid = ?4`,
      )
      .get(OPEN, CLOSE, match.chunks, hit.rid);
    return row?.s ?? "";
  },

  async noteSnippets(deps, match, hit) {
    const row = deps.db.$client
      .query<{ title: string | null; body: string | null }, [string, string, string, number]>(
        `SELECT snippet(search_notes, 0, ?1, ?2, '…', ${WORDS}) AS title, snippet(search_notes, 1, ?1, ?2, '…', ${WORDS}) AS body
           FROM search_notes WHERE search_notes MATCH ?3 AND rowid = ?4`,
      )
      .get(OPEN, CLOSE, match.notes, hit.rid);
    return { title: row?.title ?? "", body: row?.body ?? "" };
  },
};
