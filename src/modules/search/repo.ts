import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sqlRows } from "../../db/sql";
import { perStore, type Store } from "../../db/store";
import type { Deps } from "../../deps";
import type { Page } from "../../lib/pagination";
import { matchExpression } from "./terms";

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
  /** The chunk's seq; for a note's row of titles and bodies, SQLite's search_notes rowid (PostgreSQL: 0, the note's id finds it). */
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

/**
 * How many of the newest matching texts of each kind a search ranks: stream chunks (what one
 * append, or one batch of appends to a stream, wrote) and notes' titles and bodies. Fewer than
 * that match: every match is ranked. More: the newest are, so that a common word's first page
 * costs what a rare word's does at any size (docs/PERFORMANCE.md); the hits, and X-Total-Count,
 * are the notes those matches are in.
 */
export const SEARCH_CANDIDATES = 1000;

/**
 * The full-text index's queries: the one place that knows how the database indexes text. `M` is
 * what one search looks for, as this index phrases it (made once per search by `match`).
 */
export interface SearchIndex<M = unknown> {
  /** The words (terms.ts, each searched as text, all of them) within the workspace, as this index asks for them. */
  match(words: readonly string[], workspaceId: string): M;
  /** One page of matching notes and how many match in all. */
  hits(deps: Deps, match: M, filter: HitFilter, page: Page): Promise<{ rows: HitRow[]; total: number }>;
  /** The best passage of the hit's chunk, matches marked. */
  chunkSnippet(deps: Deps, match: M, hit: HitRow): Promise<string>;
  /** The best passage of the hit's note body, and its title marked, from its row of titles and bodies. */
  noteSnippets(deps: Deps, match: M, hit: HitRow): Promise<{ title: string; body: string }>;
}

/** The index of the database this process runs on: SQLite's FTS5, or PostgreSQL's tsvector under GIN. */
export function searchIndex(store: Store): SearchIndex {
  return perStore<SearchIndex>(store, { sqlite: sqliteSearch, postgres: pgSearch });
}

/*
 * SQLite only: everything below is FTS5 (the search_chunks and search_notes tables of
 * migrations/0013_search.sql, MATCH, bm25(), snippet(), their rowids, a bare column beside min()),
 * run as SQLite's own SQL on its connection. PostgreSQL's SearchIndex (tsvector and GIN) is
 * pgSearch, below it.
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

/*
 * PostgreSQL only: each text's tsvector stored beside it, with a GIN index over it
 * (migrations-pg/0002_search.sql, 0005_search_vectors.sql): a note's title and body as a
 * generated column; a chunk's sent by the writer when its letters are ASCII or Latin
 * (pg-vector.ts, exactly PostgreSQL's), else computed by a trigger (0006). Every write keeps them
 * in step (test/integration/search.test.ts checks the stored vectors, and that the plans read
 * them).
 * Text goes through notestream_search_text() (small letters; every character that is not a
 * letter, a digit or private use made a space, so words are unicode61's) and the
 * notestream_search configuration ('simple' with unaccent: case- and accent-insensitive whole
 * words). What a user typed reaches the text search parser only through phraseto_tsquery, as a
 * string (pgLiteral): never as tsquery syntax.
 */

/**
 * The indexed vectors, stored beside their text (migrations-pg/0005_search_vectors.sql): a chunk's
 * words (index note_chunks_search, the chunk as `c`), and a note's title (weight A) and body (D)
 * (index notes_search, the note as `n`). Read, never computed: a phrase's recheck and a scan of
 * every row both cost a read of the vector, not the text's tokenizing.
 */
export const PG_VECTORS = {
  chunks: `c.search_vector`,
  notes: `n.search_vector`,
};
const PG_CHUNK_VECTOR = sql.raw(PG_VECTORS.chunks);
const PG_NOTE_VECTOR = sql.raw(PG_VECTORS.notes);
/** ts_rank's weights {D, C, B, A}: a title match weighs four times a body's or a chunk's, as bm25's weights do on SQLite. */
const PG_WEIGHTS = sql.raw(`'{0.25, 0.25, 0.25, 1.0}'::float4[]`);
/** ts_rank's normalization 1: divided by 1 + the log of the text's length in words, so a short text ranks above a long one. */
const PG_RANK_NORMALIZATION = 1;
/** The first characters of a text that notestream_search_text() keeps (and so the index holds). */
const PG_INDEXED_CHARS = 200_000;
/** ts_headline's options: the whole text, every token that matches a word of the query between the noncharacter marks. */
const PG_HEADLINE = `HighlightAll=true, StartSel=${OPEN}, StopSel=${CLOSE}`;

interface PgMatch {
  words: readonly string[];
  /** Every word (AND), each a phrase of its tokens: what a hit must hold. */
  all: SQL;
  /** Any word (OR): what a snippet marks, in a note's title or body that holds only some of the words too. */
  any: SQL;
}

/**
 * A value written into a search's text rather than sent as a parameter. Without parameters a
 * query is not prepared, so PostgreSQL plans it for this search's words each time: a prepared
 * statement gets, after five runs, one generic plan for every word, and no plan suits both a word
 * in every row (walk the chunks newest first) and a rare one (read the GIN index). An E'' string
 * reads the same whatever standard_conforming_strings says.
 */
function pgLiteral(value: string | number): SQL {
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    return sql.raw(String(value));
  }
  return sql.raw(`E'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`);
}

function pgQuery(words: readonly string[], op: "&&" | "||"): SQL {
  return sql.join(
    words.map((w) => sql`phraseto_tsquery('notestream_search', notestream_search_text(${pgLiteral(w)}))`),
    sql.raw(` ${op} `),
  );
}

/** The conditions every hit meets: the caller's workspace, not in the trash, the pin and the folder. */
function pgVisible(filter: HitFilter): SQL {
  const noteId = filter.noteId === null ? sql`` : sql` AND n.id = ${pgLiteral(filter.noteId)}`;
  const folderId = filter.folderId === null ? sql`` : sql` AND n.folder_id = ${pgLiteral(filter.folderId)}`;
  return sql`n.workspace_id = ${pgLiteral(filter.workspaceId)} AND n.trashed_at IS NULL${noteId}${folderId}`;
}

/**
 * Each visible note once, at its best match: ts_rank over its chunks and over its title and
 * body, the highest kept with where it was (ties: the chunk). The workspace and the other
 * filters are applied before anything is ranked.
 *
 * The candidates, as on SQLite: the SEARCH_CANDIDATES newest matching chunks (by seq, their
 * append order) and notes (by when they last changed, which an index of the workspace's notes
 * walks) the caller may see. For a word in most rows the planner walks them newest first and stops
 * at the bound; for a rarer one it reads the GIN index. Which chunks match the index says (a word
 * of several tokens, whose positions it does not hold, is rechecked against the stored vectors).
 * Each candidate's note is looked up by its key (LATERAL … OFFSET 0 keeps the lookup, where an
 * estimate of the word's rows would have the planner hash every note of the workspace). A stream
 * ranks one of its candidate chunks (SQLite's bm25 ranks them all): its shortest, which
 * ts_rank's length normalization favours, the newest of equals.
 */
function pgBest(match: PgMatch, filter: HitFilter): SQL {
  const visible = pgVisible(filter);
  return sql`WITH chunk_rows AS MATERIALIZED (
  SELECT c.note_id, c.seq, octet_length(c.text) AS size
    FROM note_chunks c CROSS JOIN LATERAL (SELECT 1 FROM notes n WHERE n.id = c.note_id AND ${visible} OFFSET 0) AS seen
    WHERE ${PG_CHUNK_VECTOR} @@ (${match.all})
    ORDER BY c.seq DESC LIMIT ${pgLiteral(SEARCH_CANDIDATES)}
),
chunk AS (SELECT DISTINCT ON (note_id) note_id, seq FROM chunk_rows ORDER BY note_id, size, seq DESC),
note_rows AS MATERIALIZED (
  SELECT n.id, n.search_vector
    FROM notes n
    WHERE ${PG_NOTE_VECTOR} @@ (${match.all}) AND ${visible}
    ORDER BY n.updated_at DESC, n.id DESC LIMIT ${pgLiteral(SEARCH_CANDIDATES)}
),
hits AS (
  SELECT chunk.note_id, ts_rank(${PG_WEIGHTS}, ${PG_CHUNK_VECTOR}, ${match.all}, ${pgLiteral(PG_RANK_NORMALIZATION)}) AS score, ${pgLiteral(Source.Chunk)} AS src, c.seq AS rid
    FROM chunk JOIN note_chunks c ON c.seq = chunk.seq
  UNION ALL
  SELECT n.id, ts_rank(${PG_WEIGHTS}, ${PG_NOTE_VECTOR}, ${match.all}, ${pgLiteral(PG_RANK_NORMALIZATION)}), ${pgLiteral(Source.Note)}, 0
    FROM note_rows n
),
best AS (SELECT DISTINCT ON (note_id) note_id, score, src, rid FROM hits ORDER BY note_id, score DESC, src)`;
}

/** One page of the best matches, best first, then the newest, each with how many there are in all. */
function pgPage(match: PgMatch, filter: HitFilter, page: Page): SQL {
  return sql`${pgBest(match, filter)}
SELECT n.id, n.kind, n.format, n.filename, n.title, n.folder_id AS "folderId", n.byte_size AS "byteSize", n.updated_at AS "updatedAt",
       best.src, best.rid, count(*) OVER () AS total
  FROM best CROSS JOIN LATERAL (SELECT * FROM notes WHERE notes.id = best.note_id OFFSET 0) AS n
  ORDER BY best.score DESC, n.updated_at DESC, n.id
  LIMIT ${pgLiteral(page.limit)} OFFSET ${pgLiteral(page.offset)}`;
}

/** The page's query for these words, for the test that checks the indexes are used. */
export function pgPageQuery(words: readonly string[], filter: HitFilter, page: Page): SQL {
  return pgPage(pgSearch.match(words, filter.workspaceId), filter, page);
}

type PgHitRow = Omit<HitRow, "byteSize" | "updatedAt" | "rid" | "total" | "src"> & {
  byteSize: number | string;
  updatedAt: number | string;
  src: number | string;
  rid: number | string;
  total: number | string;
};

interface PgHeadline {
  k: number | string;
  /** The text as notestream_search_text() made it, each token that matches a word marked (ts_headline). */
  h: string;
  /** The original text, as much of it as is indexed. */
  t: string;
  /** The text goes on past what is indexed. */
  more: boolean;
}

/**
 * The marked passage of each text (`texts`: rows of k, t), as FTS5's snippet makes it (below).
 * PostgreSQL says which tokens match (ts_headline over the text as indexed, every token marked);
 * notestream_search_text() keeps offsets, so the marks fall on the same characters of the original.
 */
async function pgHeadlines(deps: Deps, match: PgMatch, texts: SQL): Promise<Map<number, string>> {
  const rows = await sqlRows<PgHeadline>(
    deps.store,
    sql`SELECT k, ts_headline('notestream_search', notestream_search_text(t), ${match.any}, ${pgLiteral(PG_HEADLINE)}) AS h,
       left(t, ${pgLiteral(PG_INDEXED_CHARS)}) AS t, length(t) > ${pgLiteral(PG_INDEXED_CHARS)} AS more
  FROM (${texts}) AS src(k, t)`,
  );
  const out = new Map<number, string>();
  for (const r of rows) out.set(Number(r.k), snippetOfMarked(r.h, r.t, r.more, match.words));
  return out;
}

/** What unicode61 keeps in a token (terms.ts), and combining marks, which stay with their letter. */
const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}\p{M}]/u;
const NOT_TOKEN = /[^\p{L}\p{N}\p{Co}\p{M}]+/u;
/** FTS5's sentence finder: a token after `.` or `:` and white space starts a sentence. */
const SENTENCE_END = /[.:][ \t\n\r]+$/;
const fold = (token: string) => token.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

interface Token {
  start: number;
  end: number;
  folded: string;
  /** PostgreSQL matched it to a token of the query. */
  marked: boolean;
  /** A sentence starts here: the text's first token, or one FTS5's sentence finder starts one at. */
  sentence: boolean;
}

/** A match as FTS5 counts one: a word of the query at tokens first..last (a word of several tokens, `host-3`, whole). */
interface Hit {
  first: number;
  last: number;
  word: string;
}

/**
 * The matches among the marked tokens. ts_headline marks every token equal to one of the query's,
 * and FTS5 a phrase only where all of it is: a token of a word of several tokens counts (and is
 * marked) only in a run of tokens that is the whole word.
 */
function hitsOf(tokens: Token[], words: readonly string[]): Hit[] {
  const phrases = words.map((w) => w.split(NOT_TOKEN).filter((t) => t !== "").map(fold)).filter((p) => p.length > 0);
  const singles = new Set(phrases.filter((p) => p.length === 1).map((p) => p[0]!));
  const parts = new Set(phrases.filter((p) => p.length > 1).flat());
  const hits: Hit[] = [];
  const inPhrase = new Set<number>();
  for (const p of phrases) {
    if (p.length < 2) continue;
    for (let i = 0; i + p.length <= tokens.length; i++) {
      if (!p.every((part, j) => tokens[i + j]!.marked && tokens[i + j]!.folded === part)) continue;
      hits.push({ first: i, last: i + p.length - 1, word: p.join(" ") });
      for (let j = 0; j < p.length; j++) inPhrase.add(i + j);
    }
  }
  tokens.forEach((t, i) => {
    // A token this fold does not tell apart (PostgreSQL matched it) counts as itself.
    if (t.marked && !inPhrase.has(i) && (singles.has(t.folded) || !parts.has(t.folded))) hits.push({ first: i, last: i, word: t.folded });
  });
  return hits.sort((a, b) => a.first - b.first);
}

/**
 * FTS5's snippet() over a text whose matching tokens are marked: the window of WORDS tokens with
 * the most distinct matches (1000 each, a repeat 1), centred on them, or starting at the sentence
 * one of them is in (+100, +120 at the text's start); each match marked, … where the text goes on.
 * "" when nothing matched.
 */
function snippetOfMarked(h: string, t: string, more: boolean, words: readonly string[]): string {
  const chars = [...t];
  const marked: boolean[] = [];
  let inside = false;
  for (const ch of h) {
    if (ch === OPEN) inside = true;
    else if (ch === CLOSE) inside = false;
    else marked.push(inside);
  }
  // Not the text the marks were put on: nothing to show rather than marks in the wrong places.
  if (marked.length !== chars.length) return "";
  const tokens: Token[] = [];
  let gap = "";
  for (let i = 0; i < chars.length; ) {
    if (!TOKEN_CHAR.test(chars[i]!)) {
      gap += chars[i++];
      continue;
    }
    const start = i;
    while (i < chars.length && TOKEN_CHAR.test(chars[i]!)) i++;
    const folded = fold(chars.slice(start, i).join(""));
    tokens.push({ start, end: i, folded, marked: marked[start]!, sentence: tokens.length === 0 || SENTENCE_END.test(gap) });
    gap = "";
  }
  const hits = hitsOf(tokens, words);
  if (hits.length === 0) return "";
  const score = (from: number) => {
    const seen = new Set<string>();
    let n = 0;
    let first = -1;
    let end = -1;
    for (const hit of hits) {
      if (hit.first < from) continue;
      if (hit.first >= from + WORDS) break;
      n += seen.has(hit.word) ? 1 : 1000;
      seen.add(hit.word);
      if (first < 0) first = hit.first;
      end = hit.last + 1;
    }
    return { n, first, end };
  };
  let best = -1;
  let bestStart = 0;
  let sentence = 0;
  for (const hit of hits) {
    const s = score(hit.first);
    if (s.n > best) {
      best = s.n;
      bestStart = Math.max(0, Math.min(s.first - Math.trunc((WORDS - (s.end - s.first)) / 2), tokens.length - WORDS));
    }
    if (tokens.length > WORDS) {
      while (sentence < tokens.length - 1 && sentence < hit.first && nextSentence(tokens, sentence) <= hit.first) sentence = nextSentence(tokens, sentence);
      if (sentence < hit.first) {
        const n = score(sentence).n + (sentence === 0 ? 120 : 100);
        if (n > best) [best, bestStart] = [n, sentence];
      }
    }
  }
  const last = Math.min(bestStart + WORDS, tokens.length) - 1;
  const from = bestStart === 0 ? 0 : tokens[bestStart]!.start;
  const to = last === tokens.length - 1 ? chars.length : tokens[last]!.end;
  let out = bestStart === 0 ? "" : "…";
  let at = from;
  for (const hit of hits) {
    if (hit.first < bestStart || hit.first > last) continue;
    const start = tokens[hit.first]!.start;
    if (start < at) continue;
    const end = tokens[Math.min(hit.last, last)]!.end;
    out += `${chars.slice(at, start).join("")}${OPEN}${chars.slice(start, end).join("")}${CLOSE}`;
    at = end;
  }
  return `${out}${chars.slice(at, to).join("")}${to < chars.length || more ? "…" : ""}`;
}

/** The next token after `i` that starts a sentence (tokens.length if none). */
function nextSentence(tokens: Token[], i: number): number {
  for (let j = i + 1; j < tokens.length; j++) if (tokens[j]!.sentence) return j;
  return tokens.length;
}

const num = (v: number | string) => Number(v);

/** PostgreSQL only: stored tsvectors under GIN (see above). */
export const pgSearch: SearchIndex<PgMatch> = {
  match(words) {
    // The workspace is a condition of every query (pgVisible), not a term.
    return { words, all: pgQuery(words, "&&"), any: pgQuery(words, "||") };
  },

  async hits(deps, match, filter, page) {
    const toRow = (r: PgHitRow): HitRow => ({
      ...r,
      byteSize: num(r.byteSize),
      updatedAt: num(r.updatedAt),
      src: num(r.src) as Source,
      rid: num(r.rid),
      total: num(r.total),
    });
    const rows = (await sqlRows<PgHitRow>(deps.store, pgPage(match, filter, page))).map(toRow);
    if (rows.length > 0) return { rows, total: rows[0]!.total };
    if (page.offset === 0) return { rows, total: 0 };
    const [count] = await sqlRows<{ n: number | string }>(
      deps.store,
      sql`${pgBest(match, filter)} SELECT count(*) AS n FROM best`,
    );
    return { rows, total: num(count!.n) };
  },

  async chunkSnippet(deps, match, hit) {
    const marked = await pgHeadlines(deps, match, sql`SELECT 0, text FROM note_chunks WHERE seq = ${pgLiteral(hit.rid)}`);
    return marked.get(0) ?? "";
  },

  async noteSnippets(deps, match, hit) {
    const marked = await pgHeadlines(
      deps,
      match,
      sql`SELECT 0, title FROM notes WHERE id = ${pgLiteral(hit.id)} UNION ALL SELECT 1, coalesce(body, '') FROM notes WHERE id = ${pgLiteral(hit.id)}`,
    );
    return { title: marked.get(0) ?? "", body: marked.get(1) ?? "" };
  },
};
