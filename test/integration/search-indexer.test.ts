/**
 * Search behind the append's commit (src/modules/search/indexer.ts): an append's transaction
 * leaves the index alone, and the indexer's pass finds its line within 2 s of the answer. On
 * SQLite the watermark survives what can reuse a chunk's seq and every trigger that removes index
 * rows (FTS5's integrity-check after each step); on PostgreSQL two instances on one database
 * index each chunk exactly once.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { buildHandler } from "../../src/app";
import { sqlRows, sqlRun } from "../../src/db/sql";
import type { Deps } from "../../src/deps";
import { indexSearchNow, INDEX_DELAY_MS } from "../../src/modules/search/indexer";
import { openDeps } from "../../src/runtime";
import { harness, onPostgres, type Harness } from "../helpers/harness";

let h: Harness;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
  await h.close();
});

const append = async (token: string, filename: string, text: string) => {
  const res = await h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text } });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { id: string };
};

/** The notes a search finds now, with no index pass asked for. */
async function foundNow(token: string, q: string): Promise<string[]> {
  const res = await h.request("GET", `/api/v1/search?q=${encodeURIComponent(q)}`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }[]).map((n) => n.id);
}

/** The notes a search finds once every chunk appended so far is indexed. */
async function found(token: string, q: string): Promise<string[]> {
  await indexSearchNow(h.deps);
  return foundNow(token, q);
}

/** Throws unless the index holds exactly what it should of the chunks it has taken (SQLite: FTS5's check against its content view). */
async function assertIndexConsistent(): Promise<void> {
  if (onPostgres) {
    const rows = await sqlRows<{ bad: number }>(
      h.deps.store,
      "SELECT count(*)::int AS bad FROM note_chunks WHERE search_vector IS NOT NULL AND search_vector IS DISTINCT FROM to_tsvector('notestream_search', notestream_search_text(text))",
    );
    expect(rows).toEqual([{ bad: 0 }]);
    return;
  }
  h.deps.db.$client.run("INSERT INTO search_chunks (search_chunks, rank) VALUES ('integrity-check', 1)");
}

/** Whether the chunk (by seq) is indexed: at or below SQLite's watermark; on PostgreSQL, with a vector. */
async function indexed(seq: number): Promise<boolean> {
  const q = onPostgres
    ? "SELECT search_vector IS NOT NULL AS yes FROM note_chunks WHERE seq = ?"
    : "SELECT (SELECT through FROM search_chunks_indexed) >= ? AS yes";
  const [row] = await sqlRows<{ yes: boolean | number }>(h.deps.store, q, [seq]);
  return Boolean(row?.yes);
}

const newestSeq = async () => Number((await sqlRows<{ seq: number | string }>(h.deps.store, "SELECT max(seq) AS seq FROM note_chunks"))[0]!.seq);

async function setup() {
  h = await harness();
  const a = await h.account("team");
  return { a, token: await h.token(a, ["read", "write"]) };
}

describe("search behind the append's commit", () => {
  test("an appended line is not indexed by its append's transaction, and is found within 2 s of the answer with no pass asked for", async () => {
    const { token } = await setup();
    const { id } = await append(token, "deploys.log", "deploy 9b7e2d FAILED on host-3 with pangolin");
    const answered = Date.now();
    expect(await indexed(await newestSeq())).toBe(false);
    let ids: string[] = [];
    while (Date.now() - answered < 2_000 && !ids.includes(id)) {
      ids = await foundNow(token, "pangolin");
      if (!ids.includes(id)) await Bun.sleep(50);
    }
    expect({ ids, withinTwoSeconds: Date.now() - answered < 2_000 }).toEqual({ ids: [id], withinTwoSeconds: true });
    expect(await indexed(await newestSeq())).toBe(true);
    await assertIndexConsistent();
  });

  test("every line of a burst of appends to many streams is found within 2 s of the last answer, with no pass asked for", async () => {
    const { token } = await setup();
    const ids = (await Promise.all(Array.from({ length: 30 }, (_, i) => append(token, `s${i}.log`, `line ${i} of the okapi`)))).map((r) => r.id).sort();
    const answered = Date.now();
    let seen: string[] = [];
    while (Date.now() - answered < 2_000 && seen.length < ids.length) {
      await Bun.sleep(INDEX_DELAY_MS / 5);
      seen = (await foundNow(token, "okapi")).sort();
    }
    expect(seen).toEqual(ids);
  });

  test.skipIf(onPostgres)("a chunk that reuses the seq of a deleted, indexed chunk (at or below the watermark) is indexed at once and found", async () => {
    const { token } = await setup();
    const kept = await append(token, "kept.log", "aardvark one");
    const gone = await append(token, "gone.log", "aardvark two");
    expect((await found(token, "aardvark")).sort()).toEqual([kept.id, gone.id].sort());
    const goneSeq = await newestSeq();
    // A purge of the stream that holds the newest chunk: the next chunk takes its seq again.
    await h.deps.writer.write(() => sqlRun(h.deps.store, "DELETE FROM notes WHERE id = ?", [gone.id]));
    await assertIndexConsistent();
    const reused = await append(token, "new.log", "bandicoot three");
    expect(await newestSeq()).toBe(goneSeq);
    expect(await indexed(goneSeq)).toBe(true);
    await assertIndexConsistent();
    // Found without a pass: its own insert indexed it, since the watermark is already past it.
    expect(await foundNow(token, "bandicoot")).toEqual([reused.id]);
    expect(await found(token, "aardvark")).toEqual([kept.id]);
    await assertIndexConsistent();
  });

  test.skipIf(onPostgres)("a backlog is indexed in slices: an append queued behind the catch-up waits for one slice, not for all of it", async () => {
    const { token } = await setup();
    const { id } = await append(token, "backlog.log", "start");
    await indexSearchNow(h.deps);
    // 40 chunks of 64 K characters that no pass has taken (written as another tool or a crash
    // would leave them): about ten times what one pass may take.
    const big = Array.from({ length: 8_000 }, (_, i) => `w${i % 997}`).join(" ").slice(0, 65_536);
    await h.deps.writer.write(async () => {
      for (let i = 0; i < 40; i++) await sqlRun(h.deps.store, "INSERT INTO note_chunks (note_id, text, at) VALUES (?, ?, ?)", [id, `${big}\n`, 1]);
    });
    const backlogEnd = await newestSeq();
    expect(await indexed(backlogEnd)).toBe(false);
    const catchUp = indexSearchNow(h.deps);
    await append(token, "other.log", "an append behind the catch-up");
    expect(await indexed(backlogEnd)).toBe(false);
    await catchUp;
    expect(await indexed(await newestSeq())).toBe(true);
    await assertIndexConsistent();
  });

  test("the index stays whole through trims, purges, workspace moves and edits of chunks on both sides of the watermark", async () => {
    const { a, token } = await setup();
    const other = await h.account("team");
    const otherToken = await h.token(other, ["read", "write"]);
    const streams = {} as Record<"trim" | "purge" | "move" | "edit", string>;
    const add = async (name: keyof typeof streams, text: string) => (streams[name] = (await append(token, `${name}.log`, text)).id);
    for (const name of ["trim", "purge", "move", "edit"] as const) await add(name, `${name} indexed quetzal`);
    await indexSearchNow(h.deps);
    // Each stream now has an indexed chunk and, appended after the pass, one that is not yet.
    for (const name of ["trim", "purge", "move", "edit"] as const) await add(name, `${name} pending quetzal`);
    const pending = await newestSeq();
    expect(await indexed(pending)).toBe(false);
    await assertIndexConsistent();
    const write = (q: string, params: unknown[]) => h.deps.writer.write(() => sqlRun(h.deps.store, q, params));
    // Trim: the stream's chunks go, indexed and not.
    await write("DELETE FROM note_chunks WHERE note_id = ?", [streams.trim]);
    await assertIndexConsistent();
    // Purge: the note and its chunks.
    await write("DELETE FROM notes WHERE id = ?", [streams.purge]);
    await assertIndexConsistent();
    // A move to another workspace.
    await write("UPDATE notes SET workspace_id = ? WHERE id = ?", [other.workspaceId, streams.move]);
    await assertIndexConsistent();
    // A chunk's text changed in place, on each side of the watermark.
    await write("UPDATE note_chunks SET text = replace(text, 'quetzal', 'tuatara') WHERE note_id = ?", [streams.edit]);
    await assertIndexConsistent();
    expect(await foundNow(token, "tuatara")).toEqual([streams.edit]);
    expect(await foundNow(token, "quetzal")).toEqual([]);

    await indexSearchNow(h.deps);
    await assertIndexConsistent();
    expect(await foundNow(token, "quetzal")).toEqual([]);
    expect(await foundNow(token, "tuatara")).toEqual([streams.edit]);
    expect(await foundNow(otherToken, "quetzal")).toEqual([streams.move]);
    expect(await foundNow(otherToken, "pending")).toEqual([streams.move]);
    // And new appends after all that are indexed as ever.
    const late = (await append(token, "late.log", "quetzal late")).id;
    expect(await found(token, "quetzal")).toEqual([late]);
    await assertIndexConsistent();
    expect(a.workspaceId).not.toBe(other.workspaceId);
  });
});

describe.skipIf(!onPostgres)("search behind the commit on PostgreSQL", () => {
  test("two instances on one database, each appending and indexing, index each chunk exactly once", async () => {
    const { token } = await setup();
    // Every write of a chunk's vector, recorded (a trigger of the test's own).
    await sqlRun(h.deps.store, "CREATE TABLE vector_writes (seq bigint NOT NULL)");
    await sqlRun(
      h.deps.store,
      `CREATE FUNCTION record_vector_write() RETURNS trigger LANGUAGE plpgsql AS $f$
       BEGIN
         INSERT INTO vector_writes VALUES (NEW.seq);
         RETURN NEW;
       END $f$`,
    );
    await sqlRun(h.deps.store, "CREATE TRIGGER z_record_vector_write AFTER UPDATE OF search_vector ON note_chunks FOR EACH ROW EXECUTE FUNCTION record_vector_write()");
    const second: Deps = await openDeps(h.deps.config, h.clock);
    cleanups.push(() => second.close());
    const handlers = [buildHandler(h.deps), buildHandler(second)];
    const sends = Array.from({ length: 200 }, (_, i) =>
      Promise.resolve(
        handlers[i % 2]!(
          new Request(`http://notestream.test/api/v1/notes/by-filename/s${i % 20}.log/append`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ text: `line ${i} of the kinkajou` }),
          }),
          "127.0.0.1",
        ),
      ),
    );
    for (const res of await Promise.all(sends)) expect(res.status).toBeLessThan(300);
    // Both instances' passes, at once, until nothing is left.
    await Promise.all([indexSearchNow(h.deps), indexSearchNow(second), indexSearchNow(h.deps), indexSearchNow(second)]);
    const [counts] = await sqlRows<{ chunks: number; writes: number; distinct: number; unindexed: number }>(
      h.deps.store,
      `SELECT (SELECT count(*)::int FROM note_chunks) AS chunks, (SELECT count(*)::int FROM vector_writes) AS writes,
              (SELECT count(DISTINCT seq)::int FROM vector_writes) AS distinct, (SELECT count(*)::int FROM note_chunks WHERE search_vector IS NULL) AS unindexed`,
    );
    expect(counts!.chunks).toBeGreaterThan(0);
    expect(counts).toEqual({ chunks: counts!.chunks, writes: counts!.chunks, distinct: counts!.chunks, unindexed: 0 });
    expect(await foundNow(token, "kinkajou")).toHaveLength(20);
    await assertIndexConsistent();
  });
});
