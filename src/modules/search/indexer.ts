import type { SQL } from "bun";
import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { StorageFull } from "../../http/errors";
import type { AppendHook } from "../streams/append/hooks";
import { chunkSearchVector, writerVectorsAgree } from "./pg-vector";

/*
 * The search indexer: stream chunks are indexed behind the append's commit, in batches, not
 * inside each append's transaction. An append's chunk waits for the next pass, at most
 * INDEX_DELAY_MS after its batch committed, so search finds a line within 2 s of its append's
 * answer (README); one pass indexes every chunk appended meanwhile, which costs FTS5 one segment
 * write instead of one per append batch.
 *
 * What is not indexed yet is durable, so nothing is lost to a crash between an append and its
 * pass: the next pass (one runs at start-up, schedule.ts) takes it.
 * - SQLite: the chunks above a watermark (search_chunks_indexed.through, migrations/0019), raised
 *   in the pass's own write, which runs through the writer like every write.
 * - PostgreSQL: the chunks whose search_vector is NULL (migrations-pg/0008). A pass claims them
 *   with FOR UPDATE SKIP LOCKED, so instances sharing the database never index one twice, and
 *   runs on the pool, beside the writer's connection, not in its batches.
 * Titles and bodies of notes are not on the append path: their triggers index them as they change.
 */

/** How long a committed append's chunk waits for its pass: the appends of that time share one. */
export const INDEX_DELAY_MS = 500;
/** The chunks one pass takes at most; more waiting, the next pass follows at once. */
export const PASS_CHUNKS = 2000;
/**
 * SQLite: the characters of text one pass takes at most (and at least one chunk). The pass is a
 * write, so appends queued behind it wait for it: a backlog (a restart after a crash, chunks
 * written by another tool) is taken in slices of a few milliseconds each, with the appends that
 * arrived meanwhile committed between them, rather than in one long write they all wait out.
 */
export const PASS_CHARS = 256 * 1024;
/**
 * PostgreSQL: the chunks one pass takes at most. Its UPDATE writes every vector and its GIN
 * entries in one transaction whose WAL the writer's next COMMIT flushes with its own, so a large
 * pass would hold up the appends' answers: a few hundred chunks keep that wait short.
 */
export const PG_PASS_CHUNKS = 100;

/** The SQLSTATEs a tsvector literal can raise: a data exception (22), a syntax error (42), a limit (54). */
const LITERAL_ERROR = /^(22|42|54)/;

/** One pass's work: how many chunks it indexed, and whether more wait. */
interface Pass {
  indexed: number;
  more: boolean;
}

/**
 * SQLite: the chunks above the watermark, up to PASS_CHUNKS of them and PASS_CHARS of their text,
 * indexed in one write with the watermark raised over them.
 */
function sqlitePass(deps: Deps, db: Database): Promise<Pass> {
  return deps.writer.write(() => {
    const through = db.query<{ through: number }, []>("SELECT through FROM search_chunks_indexed").get()!.through;
    const upto = db
      .query<{ upto: number | null; n: number }, [number, number, number]>(
        `SELECT max(seq) AS upto, count(*) AS n FROM (
           SELECT seq, sum(length(text)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - length(text) AS before
           FROM note_chunks WHERE seq > ?1 ORDER BY seq LIMIT ?2
         ) WHERE before < ?3`,
      )
      .get(through, PASS_CHUNKS, PASS_CHARS)!;
    if (upto.upto === null) return { indexed: 0, more: false };
    db.query(
      `INSERT INTO search_chunks (rowid, text, ws)
         SELECT c.seq, c.text, hex(n.workspace_id) FROM note_chunks c JOIN notes n ON n.id = c.note_id WHERE c.seq > ?1 AND c.seq <= ?2`,
    ).run(through, upto.upto);
    db.query("UPDATE search_chunks_indexed SET through = ?").run(upto.upto);
    const more = db.query<{ more: number }, [number]>("SELECT EXISTS (SELECT 1 FROM note_chunks WHERE seq > ?) AS more").get(upto.upto)!.more === 1;
    return { indexed: upto.n, more };
  });
}

/**
 * PostgreSQL: up to PG_PASS_CHUNKS chunks with no vector, claimed in a transaction of their own. A
 * chunk's vector is the writer's literal where it builds one (pg-vector.ts: ASCII and Latin
 * letters, a seventh of PostgreSQL's cost), PostgreSQL's to_tsvector otherwise. Should
 * PostgreSQL refuse a literal (a word past its limits that pg-vector.ts let through), the pass's
 * statement runs again with PostgreSQL computing every vector, so no line fails to be indexed.
 */
async function pgPass(pool: SQL, vectors: boolean): Promise<Pass> {
  return pool.begin(async (tx) => {
    const rows = await tx.unsafe<{ seq: string; text: string }[]>(
      `SELECT seq, text FROM note_chunks WHERE search_vector IS NULL ORDER BY seq LIMIT ${PG_PASS_CHUNKS} FOR UPDATE SKIP LOCKED`,
    );
    if (rows.length === 0) return { indexed: 0, more: false };
    const seqs = rows.map((r) => r.seq);
    const update = (literals: (string | null)[]) =>
      tx.unsafe(
        `UPDATE note_chunks AS c
           SET search_vector = coalesce(v.vector::tsvector, to_tsvector('notestream_search', notestream_search_text(c.text)))
           FROM unnest($1::bigint[], $2::text[]) AS v(seq, vector) WHERE c.seq = v.seq`,
        [seqs, literals],
      );
    if (!vectors) await update(seqs.map(() => null));
    else {
      await tx.unsafe("SAVEPOINT literals");
      try {
        await update(rows.map((r) => chunkSearchVector(r.text)));
      } catch (e) {
        if (!LITERAL_ERROR.test(String((e as { errno?: unknown } | null)?.errno))) throw e;
        const msg = "PostgreSQL refused a search vector built by notestream: it computes this pass's vectors itself";
        console.error(JSON.stringify({ time: new Date().toISOString(), level: "warn", msg, error: String((e as Error)?.message ?? e) }));
        await tx.unsafe("ROLLBACK TO SAVEPOINT literals");
        await update(seqs.map(() => null));
      }
    }
    return { indexed: rows.length, more: rows.length === PG_PASS_CHUNKS };
  });
}

/** The indexer of one process's deps: at most one pass pending or running; appends meanwhile ask for one more. */
class Indexer {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private pass: () => Promise<Pass>;

  constructor(deps: Deps) {
    const store = deps.store;
    if (store.kind === "postgres") {
      // Asked once, at the first pass; asked again should that fail (the database away).
      let vectors: Promise<boolean> | null = null;
      const agree = () =>
        (vectors ??= vectorsAgree(store.pool).catch((e) => {
          vectors = null;
          throw e;
        }));
      this.pass = async () => pgPass(store.pool, await agree());
    } else {
      this.pass = () => sqlitePass(deps, store.client);
    }
  }

  /** A pass within `delay` ms (one already pending keeps its time; one running is followed by another). */
  soon(delay = INDEX_DELAY_MS): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run();
    }, delay);
  }

  /** Runs passes until none is left (the chunks committed so far are all indexed). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
    while (!this.stopped && (await this.pass()).more);
  }

  private run(): Promise<void> {
    this.running = (async () => {
      try {
        let pass: Pass;
        do pass = await this.pass();
        while (pass.more && !this.stopped);
      } catch (e) {
        // What failed stays unindexed (durably): the next pass takes it again. A full disk refuses
        // the pass as it refuses every write that frees nothing; the spell's end is logged elsewhere.
        if (!this.stopped && !(e instanceof StorageFull)) console.error(JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "a search index pass failed", error: String((e as Error)?.stack ?? e) }));
      } finally {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.soon();
        }
      }
    })();
    return this.running;
  }

  /** No pass starts any more; the one running finishes (before the database closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

/** Whether the writer's literals are PostgreSQL's vectors on this database (asked once per process). */
async function vectorsAgree(pool: SQL): Promise<boolean> {
  const agree = await writerVectorsAgree(pool);
  if (!agree) {
    const msg = "this database tokenizes text unlike notestream's writer (its locale, or its PostgreSQL version): PostgreSQL computes every chunk's search vector, which is slower";
    console.error(JSON.stringify({ time: new Date().toISOString(), level: "warn", msg }));
  }
  return agree;
}

const indexers = new WeakMap<Deps, Indexer>();

/** These deps' indexer, made on first use; it stops before their database closes. */
function indexerOf(deps: Deps): Indexer {
  let indexer = indexers.get(deps);
  if (!indexer) {
    const made = (indexer = new Indexer(deps));
    indexers.set(deps, made);
    const close = deps.close;
    deps.close = async () => {
      await made.stop();
      await close();
    };
  }
  return indexer;
}

/** The after-append hook (runtime.ts AFTER_APPEND): a batch that wrote lines has committed, so a pass follows soon. */
export const searchOnAppend: AppendHook = {
  committed: (deps) => indexerOf(deps).soon(),
};

/** A pass at once, for what is left unindexed (at start-up, after a crash, or another instance's). */
export function catchUpSearchIndex(deps: Deps): void {
  indexerOf(deps).soon(0);
}

/** Indexes every chunk committed so far, and resolves when it is done (tests, which then search at once). */
export function indexSearchNow(deps: Deps): Promise<void> {
  return indexerOf(deps).drain();
}
