/**
 * A search ranks at most the SEARCH_CANDIDATES newest matching texts of each kind (a stream's
 * chunks, notes' titles and bodies), so a common word's first page does not rank every match:
 * past the bound it finds the notes of the newest matches, X-Total-Count counts those, and the
 * filters (a folder, a pinned token) apply before the bound, so they reach older matches. On
 * SQLite a word in very many rows is searched newest first, since bm25 would count them all.
 */
import { afterEach, expect, test } from "bun:test";
import { PgDialect } from "drizzle-orm/pg-core";
import { noteChunks } from "../../src/db/tables";
import { SEARCH_CANDIDATES } from "../../src/modules/search/engine";
import { indexSearchNow } from "../../src/modules/search/indexer";
import { pgPageQuery } from "../../src/modules/search/postgres";
import { RANKED_WORD_ROWS } from "../../src/modules/search/sqlite";
import { harness, onPostgres, type Harness, type TestResponse } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

async function ok(res: TestResponse | Promise<TestResponse>): Promise<any> {
  const r = await res;
  expect(r.status).toBeLessThan(300);
  return r.json();
}

async function found(token: string, query: string): Promise<{ ids: string[]; total: number }> {
  await indexSearchNow(h.deps);
  const res = await h.request("GET", `/api/v1/search?${query}`, { token });
  expect(res.status).toBe(200);
  return { ids: ((await res.json()) as { id: string }[]).map((n) => n.id).sort(), total: Number(res.headers.get("x-total-count")) };
}

test("a word in more texts than the bound finds the notes of its newest matches; a folder, a pin and a rarer word reach older ones", async () => {
  h = await harness();
  const a = await h.account("dev");
  const token = await h.token(a, ["read", "write"]);
  const folder = (await ok(h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Old" } } }))).id as string;
  const append = (filename: string, text: string) => ok(h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: { text } }));
  const old = await append("old.log", "ocelot seen at the gate");
  await ok(h.request("PATCH", `/api/v1/notes/${old.id}`, { token, body: { note: { folder_id: folder } } }));
  await append("old.log", "ocelot again, and a quokka");
  const titled = await ok(h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Ocelot sightings" } } }));
  // Then more matching chunks than the bound, newer than old.log's: one stream's, written
  // straight into the table as that many appends would store them (the index follows by its
  // triggers), rather than through a thousand requests.
  const busy = await append("busy.log", "ocelot 0");
  await h.deps.writer.write(() =>
    h.deps.db.insert(noteChunks).values(Array.from({ length: SEARCH_CANDIDATES + 10 }, (_, i) => ({ noteId: busy.id, text: `ocelot ${i + 1}\n`, at: h.clock.now() }))),
  );

  // Every chunk that ranks is busy.log's: old.log's matches are older than the bound. The note
  // whose title matches is a candidate of its own kind.
  expect(await found(token, "q=ocelot")).toEqual({ ids: [busy.id, titled.id].sort(), total: 2 });
  // Filters apply before the bound: within the folder, old.log's matches are the newest.
  expect(await found(token, `q=ocelot&folder_id=${folder}`)).toEqual({ ids: [old.id], total: 1 });
  const pinned = await h.token(a, ["read"], { noteId: old.id });
  expect(await found(pinned, "q=ocelot")).toEqual({ ids: [old.id], total: 1 });
  // A word found less often than the bound ranks every match, as before.
  expect(await found(token, "q=quokka")).toEqual({ ids: [old.id], total: 1 });
  // Pages stay within what was found.
  expect(await found(token, "q=ocelot&limit=1&offset=1")).toEqual({ ids: [expect.any(String)], total: 2 });
  expect(await found(token, "q=ocelot&offset=5")).toEqual({ ids: [], total: 2 });
});

// PostgreSQL's ts_rank weighs no word by how many rows hold it: it ranks candidates at any count.
test.skipIf(onPostgres)("SQLite: a word in more rows of the index than bm25 may count comes newest first, not ranked", async () => {
  h = await harness();
  const a = await h.account("dev");
  const token = await h.token(a, ["read", "write"]);
  const titled = await ok(h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Ocelot" } } }));
  h.clock.advance(60_000);
  const busy = await ok(h.request("POST", "/api/v1/notes/by-filename/busy.log/append", { token, body: { text: "an ocelot in a long line of the log, among many other words" } }));
  const order = async () => ((await indexSearchNow(h.deps), await ok(h.request("GET", "/api/v1/search?q=ocelot", { token }))) as { id: string }[]).map((n) => n.id);
  // Ranked, the title match weighs most.
  expect(await order()).toEqual([titled.id, busy.id]);
  await h.deps.writer.write(() => {
    h.deps.db.$client.run(
      `WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < ${RANKED_WORD_ROWS}) INSERT INTO note_chunks (note_id, text, at) SELECT ?, 'ocelot ' || x || char(10), 0 FROM i`,
      [busy.id],
    );
  });
  // The most recently changed note first.
  expect(await order()).toEqual([busy.id, titled.id]);
});

test("quotes and backslashes in words are text; PostgreSQL's search queries carry no parameters, so each is planned for its own words", async () => {
  h = await harness();
  const a = await h.account("dev");
  const token = await h.token(a, ["read", "write"]);
  // A prepared statement gets one generic plan after five runs: a rare word would then walk every
  // chunk newest first, as a word in every row should.
  const query = new PgDialect().sqlToQuery(pgPageQuery(["o'brien\\", "x"], { workspaceId: a.workspaceId, noteId: "note_1", folderId: "fold_1" }, { limit: 50, offset: 0 }));
  expect(query.params).toEqual([]);
  const note = await ok(h.request("POST", "/api/v1/notes/by-filename/quotes.log/append", { token, body: { text: "it's o'brien\\ x, and \\'' too" } }));
  await indexSearchNow(h.deps);
  for (const q of ["o'brien\\ x", "brien\\'' x", "it's"]) {
    const res = await h.request("GET", `/api/v1/search?q=${encodeURIComponent(q)}`, { token });
    expect({ q, status: res.status, ids: ((await res.json()) as { id: string }[]).map((n) => n.id) }).toEqual({ q, status: 200, ids: [note.id] });
  }
});
