import { sql, type SQL } from "drizzle-orm";
import { sqlRows } from "../../db/sql";
import type { Deps } from "../../deps";
import type { Page } from "../../lib/pagination";
import { CLOSE, OPEN, SEARCH_CANDIDATES, Source, type HitFilter, type HitRow, type SearchIndex } from "./engine";
import { snippetOfMarked } from "./pg-snippet";

/*
 * PostgreSQL's search index: each text's tsvector stored beside it, with a GIN index over it
 * (migrations-pg/0002_search.sql, 0005_search_vectors.sql): a note's title and body as a
 * generated column; a chunk's set by the indexer behind the append's commit (indexer.ts,
 * migrations-pg/0008: the JS literal of pg-vector.ts, exactly PostgreSQL's, or PostgreSQL's own
 * to_tsvector); until then it is NULL and matches nothing (test/integration/search.test.ts
 * checks the stored vectors, and that the plans read them). The FTS5 snippet() that PostgreSQL
 * lacks is pg-snippet.ts.
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
