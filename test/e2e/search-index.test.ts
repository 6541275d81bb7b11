/**
 * Search behind the append's commit on the compiled binary: a line is found within 2 s of its
 * append's answer, and lines whose index pass a kill -9 pre-empted are indexed after the restart
 * (what is not indexed yet is durable: SQLite's watermark, PostgreSQL's NULL vectors). Runs on
 * SQLite and on PostgreSQL (make test's two passes).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { databasePath } from "../../src/db/client";
import { BUILD_TIMEOUT_MS, append, buildBinary, cleanup, databaseOf, provision, request, startServer, tempDir } from "../helpers/binary";

beforeAll(() => void buildBinary(), BUILD_TIMEOUT_MS);
afterAll(() => cleanup());

/** How many chunks are not indexed yet, read from the database itself (the server is gone). */
async function unindexedChunks(dataDir: string): Promise<number> {
  const pg = databaseOf(dataDir);
  if (pg) return Number((await pg.sql`SELECT count(*) AS n FROM note_chunks WHERE search_vector IS NULL`)[0].n);
  const db = new Database(databasePath(dataDir));
  try {
    return db.query<{ n: number }, []>("SELECT count(*) AS n FROM note_chunks WHERE seq > (SELECT through FROM search_chunks_indexed)").get()!.n;
  } finally {
    db.close();
  }
}

/** The ids a search finds, polled until it finds all of `ids` or `ms` have passed. */
async function foundWithin(base: string, token: string, q: string, ids: string[], ms: number): Promise<string[]> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await request(base, "GET", `/api/v1/search?q=${encodeURIComponent(q)}&limit=100`, { token });
    expect(r.status).toBe(200);
    const seen = (r.body as { id: string }[]).map((n) => n.id);
    if (ids.every((id) => seen.includes(id)) || Date.now() > until) return seen.sort();
    await Bun.sleep(50);
  }
}

test("lines appended just before a kill -9 are found after the restart; a new line within 2 s of its answer", async () => {
  const dataDir = tempDir("search-index");
  const { token } = provision(dataDir);
  let server = await startServer(dataDir);
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => append(server.base, token, `s${i % 4}.log`, `line ${i}: the jerboa ran`)));
  for (const a of answers) expect(a.status).toBeLessThan(300);
  // Killed before the indexer's pass (it waits for more appends to share it): the lines are stored, not indexed.
  await server.stop("SIGKILL");
  expect(await unindexedChunks(dataDir)).toBeGreaterThan(0);

  server = await startServer(dataDir);
  try {
    const ids = [...new Set(answers.map((a) => a.body.id as string))].sort();
    expect(ids).toHaveLength(4);
    expect(await foundWithin(server.base, token, "jerboa", ids, 2_000)).toEqual(ids);
    const fresh = await append(server.base, token, "fresh.log", "a gerenuk at the door");
    const answered = Date.now();
    expect(await foundWithin(server.base, token, "gerenuk", [fresh.body.id], 2_000)).toEqual([fresh.body.id]);
    expect(Date.now() - answered).toBeLessThan(2_000);
  } finally {
    await server.stop("SIGKILL");
  }
  expect(await unindexedChunks(dataDir)).toBe(0);
}, 60_000);
