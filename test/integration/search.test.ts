/**
 * Full-text search of note contents: GET /api/v1/search and MCP's list_notes with a query. The
 * index follows every way text changes (appends, edits, snapshot restores, the trash, retention,
 * deletes of whole workspaces), is scoped to the caller's workspace and pin, pages like every
 * list, and takes whatever a user types without a 500.
 */
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { count, eq } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildHandler } from "../../src/app";
import { sqlRows, sqlRun } from "../../src/db/sql";
import { noteChunks, notes, workspaces } from "../../src/db/tables";
import { RestBackend } from "../../src/mcp/rest";
import { AppError } from "../../src/http/errors";
import { createRichNote } from "../../src/modules/notes/rich";
import { chunkSearchVector, isKnownSeparator, latinLetters, writerVectorsAgree } from "../../src/modules/search/pg-vector";
import { indexSearchNow } from "../../src/modules/search/indexer";
import { PG_VECTORS, pgPageQuery } from "../../src/modules/search/postgres";
import { appendByFilename } from "../../src/modules/streams/append/service";
import { lookupPrincipal } from "../../src/modules/tokens/service";
import { webPrincipal } from "../../src/web/session";
import { runTask } from "../../src/schedule";
import { errorOf, harness, onPostgres, type Harness, type TestResponse } from "../helpers/harness";
import { tool, toolError } from "../helpers/mcp";

const DAY = 86_400_000;

let h: Harness;
let server: ReturnType<typeof Bun.serve> | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close().catch(() => {});
  server?.stop(true);
  [client, server] = [undefined, undefined];
  await h.close();
});

type Acct = { accountId: string; workspaceId: string; email: string };

async function setup(plan: "dev" | "team" = "dev"): Promise<{ a: Acct; token: string }> {
  h = await harness();
  const a = await h.account(plan);
  return { a, token: await h.token(a, ["read", "write"]) };
}

const append = (token: string, filename: string, text: string) =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text } });
const createNote = async (token: string, note: Record<string, unknown>) => {
  const res = await h.request("POST", "/api/v1/notes", { token, body: { note } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
};
/** A search once every chunk appended so far is indexed (search trails the append's commit by the indexer's pass). */
const search = async (token: string, q: string, extra = "") => {
  await indexSearchNow(h.deps);
  return h.request("GET", `/api/v1/search?q=${encodeURIComponent(q)}${extra}`, { token });
};

async function foundIds(token: string, q: string, extra = ""): Promise<string[]> {
  const res = await search(token, q, extra);
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }[]).map((n) => n.id);
}

/**
 * Throws when an index is out of step with what it indexes. SQLite: FTS5's own check of both
 * indexes (the chunks through their view, which shows the chunks at or below the indexer's
 * watermark). PostgreSQL: every stored vector equals the one PostgreSQL computes from its text, a
 * chunk's whether the indexer built it (ASCII or Latin letters, src/modules/search/pg-vector.ts)
 * or PostgreSQL did (a chunk not indexed yet has none), a note's as its generated column.
 */
async function assertIndexConsistent() {
  if (onPostgres) {
    const [chunks] = await sqlRows<{ bad: number }>(
      h.deps.store,
      "SELECT count(*) FILTER (WHERE search_vector IS NOT NULL AND search_vector IS DISTINCT FROM to_tsvector('notestream_search', notestream_search_text(text)))::int AS bad FROM note_chunks",
    );
    const [titles] = await sqlRows<{ bad: number }>(
      h.deps.store,
      `SELECT count(*)::int AS bad FROM notes WHERE search_vector IS DISTINCT FROM
         setweight(to_tsvector('notestream_search', notestream_search_text(title)), 'A')
         || setweight(to_tsvector('notestream_search', notestream_search_text(coalesce(body, ''))), 'D')`,
    );
    expect({ chunks: chunks!.bad, notes: titles!.bad }).toEqual({ chunks: 0, notes: 0 });
    return;
  }
  const sqlite = h.deps.db.$client;
  sqlite.run("INSERT INTO search_chunks (search_chunks, rank) VALUES ('integrity-check', 1)");
  sqlite.run("INSERT INTO search_notes (search_notes, rank) VALUES ('integrity-check', 0)");
}

/**
 * Words of 2,044 to 2,050 bytes, about PostgreSQL's longest (2,046): of ASCII letters, and of
 * two-byte Latin letters (an ASCII one last for an odd count), small and capital, some of which
 * unaccent spells in two ASCII letters (ß, œ) or one (ł).
 */
function boundaryWords(): string[] {
  const words: string[] = [];
  for (let bytes = 2044; bytes <= 2050; bytes++) {
    words.push("x".repeat(bytes), "7".repeat(bytes));
    for (const letter of ["é", "É", "ß", "ł", "œ"]) words.push(letter.repeat(bytes >> 1) + (bytes % 2 ? "a" : ""));
  }
  return words;
}

/** PostgreSQL: runs `f` on one connection in a transaction that plans with the indexes only where it can. */
/** The app's PostgreSQL pool (on the PostgreSQL run). */
const pgClient = () => (h.deps.db as unknown as { $client: import("bun").SQL }).$client;

async function withIndexesOnly<T>(f: (tx: import("bun").SQL) => Promise<T>): Promise<T> {
  return (await pgClient().begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    return f(tx);
  })) as T;
}

/** Rows of the index that hold a word, whoever they belong to (on PostgreSQL read through its GIN indexes). */
async function indexRowsWith(word: string): Promise<number> {
  if (onPostgres) {
    return withIndexesOnly(async (tx) => {
      const q = "phraseto_tsquery('notestream_search', notestream_search_text($1))";
      const [chunks] = await tx.unsafe(`SELECT count(*)::int AS n FROM note_chunks c WHERE ${PG_VECTORS.chunks} @@ ${q}`, [word]);
      const [notes] = await tx.unsafe(`SELECT count(*)::int AS n FROM notes n WHERE ${PG_VECTORS.notes} @@ ${q}`, [word]);
      return (chunks as { n: number }).n + (notes as { n: number }).n;
    });
  }
  const sqlite = h.deps.db.$client;
  const q = `"${word}"`;
  const chunks = sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM search_chunks WHERE search_chunks MATCH ?").get(q)!.n;
  const notes = sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM search_notes WHERE search_notes MATCH ?").get(`{title body} : ${q}`)!.n;
  return chunks + notes;
}

async function expect400(res: TestResponse) {
  expect(res.status).toBe(400);
  const err = await errorOf(res);
  expect(err.code).toBe("bad_request");
  expect(err.details[0].field).toBe("q");
  return err;
}

describe("GET /api/v1/search", () => {
  test("a word appended a moment ago is found, with the note's fields and the match marked in the snippet", async () => {
    const { token } = await setup();
    await append(token, "deploys.log", "deploy 4f2a1c ok in 42s");
    const appended = await (await append(token, "deploys.log", "deploy 9b7e2d FAILED: disk full on host-3")).json();
    const res = await search(token, "disk");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("1");
    const [hit] = await res.json();
    expect(hit).toEqual({
      id: appended.id,
      kind: "stream",
      format: "plain",
      filename: "deploys.log",
      title: "deploys.log",
      folder_id: null,
      byte_size: appended.byte_size,
      updated_at: appended.updated_at,
      snippet: "deploy 9b7e2d FAILED: **disk** full on host-3",
      snippet_parts: [
        { text: "deploy 9b7e2d FAILED: ", match: false },
        { text: "disk", match: true },
        { text: " full on host-3", match: false },
      ],
    });
  });

  test("every word must match (AND), whole words, without regard to case or accents; a word with punctuation matches as a phrase", async () => {
    const { token } = await setup();
    const cafe = (await (await append(token, "menu.log", "Crème brûlée at the Café\n")).json()).id;
    const host = (await (await append(token, "hosts.log", "host-3 rebooted; host 4 stayed up")).json()).id;
    expect(await foundIds(token, "cafe")).toEqual([cafe]);
    expect(await foundIds(token, "CAFÉ creme")).toEqual([cafe]);
    expect(await foundIds(token, "cafe host")).toEqual([]);
    expect(await foundIds(token, "caf")).toEqual([]);
    expect(await foundIds(token, "host-3")).toEqual([host]);
    expect(await foundIds(token, "host-5")).toEqual([]);
  });

  test("words inside addresses, paths and hosts are found, in any script and case; snippets are cut and marked as FTS5's", async () => {
    const { token } = await setup();
    const snippets = async (q: string) => ((await (await search(token, q)).json()) as { snippet: string }[]).map((hit) => hit.snippet);
    await append(token, "access.log", "GET /api/v2/users from bob@example.com via api.example.net took 42ms");
    await append(token, "hosts.log", "deploy 9b7e2d FAILED: disk full on host-3; host 4 fine");
    await append(token, "greek.log", "Η ΑΘΗΝΑ και η αθηνα");
    await append(token, "long.log", `${Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ")} needle ${Array.from({ length: 60 }, (_, i) => `v${i}`).join(" ")}`);
    await append(token, "prose.log", "First sentence is here. Second sentence has the pin in it, and goes on and on for quite a few more words than sixteen.");
    expect(await snippets("example")).toEqual(["GET /api/v2/users from bob@**example**.com via api.**example**.net took 42ms"]);
    expect(await snippets("users bob 42ms")).toEqual(["GET /api/v2/**users** from **bob**@example.com via api.example.net took **42ms**"]);
    // A word of several tokens is marked whole, where all of it is.
    expect(await snippets("host-3")).toEqual(["deploy 9b7e2d FAILED: disk full on **host-3**; host 4 fine"]);
    expect(await snippets("ΑΘΗΝΑ")).toEqual(["Η **ΑΘΗΝΑ** και η **αθηνα**"]);
    // 16 words around the match, … where the text goes on; or from the start of the match's sentence.
    expect(await snippets("needle")).toEqual(["…w53 w54 w55 w56 w57 w58 w59 **needle** v0 v1 v2 v3 v4 v5 v6 v7…"]);
    expect(await snippets("pin")).toEqual(["…Second sentence has the **pin** in it, and goes on and on for quite a few…"]);
  });

  test("titles and editable bodies are searched; a title match ranks above a body match", async () => {
    const { token } = await setup();
    const inBody = await createNote(token, { title: "Weekly notes", plain_body: "the runbook says: page someone" });
    const inTitle = await createNote(token, { title: "Runbook", plain_body: "1. check the dashboards" });
    expect(await foundIds(token, "runbook")).toEqual([inTitle.id, inBody.id]);
    const [hit] = await (await search(token, "dashboards")).json();
    expect(hit.snippet).toBe("1. check the **dashboards**");
    // Only the title matched: the snippet is the title, marked.
    const titleOnly = await (await search(token, "weekly")).json();
    expect(titleOnly[0].snippet).toBe("**Weekly** notes");
  });

  test("an edit replaces the old text in the index: the old word is not found, the new one is; a title change too", async () => {
    const { token } = await setup();
    const note = await createNote(token, { title: "Plan", plain_body: "migrate the postgres cluster" });
    expect(await foundIds(token, "postgres")).toEqual([note.id]);
    expect((await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { plain_body: "move to sqlite instead" } } })).status).toBe(200);
    expect(await foundIds(token, "postgres")).toEqual([]);
    expect(await foundIds(token, "sqlite")).toEqual([note.id]);
    expect((await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { title: "Roadmap" } } })).status).toBe(200);
    expect(await foundIds(token, "plan")).toEqual([]);
    expect(await foundIds(token, "roadmap")).toEqual([note.id]);
    // A stream's title too.
    const stream = (await (await append(token, "jobs.log", "nightly ok")).json()).id;
    expect((await h.request("PATCH", `/api/v1/notes/${stream}`, { token, body: { note: { title: "Nightly backups" } } })).status).toBe(200);
    expect(await foundIds(token, "backups")).toEqual([stream]);
    await assertIndexConsistent();
  });

  test("a rich note is found by its text, never by its HTML", async () => {
    const { a, token } = await setup();
    const ctx = { deps: h.deps, principal: webPrincipal(a.accountId, a.workspaceId, Infinity) };
    const { body } = await createRichNote({ ctx, title: "Launch", html: '<p>Ship <strong>gamma</strong> <a href="https://example.com/x">release</a></p>' });
    expect(await foundIds(token, "gamma release")).toEqual([body.id]);
    expect(await foundIds(token, "strong")).toEqual([]);
    expect(await foundIds(token, "example")).toEqual([]);
  });

  test("the trash: a deleted note is not found, a restored one is again, a purged one is gone from the index", async () => {
    const { token } = await setup();
    const id = (await (await append(token, "errors.log", "ENOTFOUND api.example.net")).json()).id;
    const note = await createNote(token, { title: "Scratch", plain_body: "ENOTFOUND again" });
    expect((await foundIds(token, "enotfound")).sort()).toEqual([id, note.id].sort());
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    expect(await foundIds(token, "enotfound")).toEqual([note.id]);
    expect((await h.request("POST", `/api/v1/notes/${id}/restore`, { token })).status).toBe(200);
    expect((await foundIds(token, "enotfound")).sort()).toEqual([id, note.id].sort());

    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    expect((await h.request("DELETE", `/api/v1/notes/${note.id}`, { token })).status).toBe(200);
    h.clock.advance(31 * DAY);
    await runTask(h.deps, "trash-purge");
    expect(await h.deps.db.select({ n: count() }).from(notes)).toEqual([{ n: 0 }]);
    expect(await indexRowsWith("enotfound")).toBe(0);
    await assertIndexConsistent();
  });

  test("a snapshot restore puts the restored text back in the index", async () => {
    const { token } = await setup();
    const note = await createNote(token, { title: "Draft", plain_body: "version alpha" });
    expect((await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { plain_body: "version beta" } } })).status).toBe(200);
    expect(await foundIds(token, "alpha")).toEqual([]);
    const [snap] = await (await h.request("GET", `/api/v1/notes/${note.id}/snapshots`, { token })).json();
    expect((await h.request("POST", `/api/v1/notes/${note.id}/snapshots/${snap.id}/restore`, { token })).status).toBe(200);
    expect(await foundIds(token, "alpha")).toEqual([note.id]);
    expect(await foundIds(token, "beta")).toEqual([]);
    await assertIndexConsistent();
  });

  test("retention: lines dropped from a full drop_oldest stream's head and lines past retention_days are not found afterwards", async () => {
    const { token } = await setup("team");
    // Drop oldest: fill a stream to its 3 MB cap behind a first line, then append past it.
    const id = (await (await append(token, "full.log", "zeppelin departed")).json()).id;
    const block = "y".repeat(100 * 1024 - 1);
    for (let i = 0; i < 30; i++) expect((await append(token, "full.log", block)).status).toBe(200);
    const have = (await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).byte_size as number;
    expect((await append(token, "full.log", "z".repeat(3 * 1024 * 1024 - have - 1))).status).toBe(200);
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { retention: "drop_oldest" } } })).status).toBe(200);
    expect(await foundIds(token, "zeppelin")).toEqual([id]);
    const dropped = await (await append(token, "full.log", "airship arrived")).json();
    expect(dropped.dropped_bytes).toBeGreaterThan(0);
    expect(await foundIds(token, "zeppelin")).toEqual([]);
    expect(await foundIds(token, "airship")).toEqual([id]);

    // Retention by age: the sweep removes the old chunk and its index rows.
    const aged = (await (await append(token, "aged.log", "quokka sighted")).json()).id;
    expect((await h.request("PATCH", `/api/v1/notes/${aged}`, { token, body: { note: { retention_days: 1 } } })).status).toBe(200);
    h.clock.advance(2 * DAY);
    expect((await append(token, "aged.log", "wombat sighted")).status).toBe(200);
    await runTask(h.deps, "retention");
    expect(await foundIds(token, "quokka")).toEqual([]);
    expect(await foundIds(token, "wombat sighted")).toEqual([aged]);
    await assertIndexConsistent();
  });

  test("lines that arrive through the inbox and notes made in bulk are found", async () => {
    const { token } = await setup();
    const id = (await (await append(token, "alerts.log", "first")).json()).id;
    const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "capybara detected in the datacenter", headers: { "content-type": "text/plain" } })).status).toBe(202);
    await h.jobs.drain();
    expect(await foundIds(token, "capybara")).toEqual([id]);
    const bulk = await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes: [{ title: "One", plain_body: "narwhal" }, { title: "Two", plain_body: "narwhal too" }] } });
    expect(bulk.status).toBe(201);
    expect((await foundIds(token, "narwhal")).sort()).toEqual(((await bulk.json()) as { id: string }[]).map((n) => n.id).sort());
  });

  test("another workspace's notes are never found, and deleting a workspace empties its part of the index", async () => {
    const { token } = await setup();
    const mine = (await (await append(token, "a.log", "platypus")).json()).id;
    const b = await h.account("dev");
    const other = await h.token(b, ["read", "write"]);
    const theirs = (await (await append(other, "b.log", "platypus")).json()).id;
    await createNote(other, { title: "platypus", plain_body: "platypus" });
    expect(await foundIds(token, "platypus")).toEqual([mine]);
    expect(await foundIds(other, "platypus")).not.toContain(mine);
    expect(await foundIds(other, "platypus")).toContain(theirs);
    // What deleting an account does to its workspace: the cascade takes notes, chunks and their index rows.
    await h.deps.db.delete(workspaces).where(eq(workspaces.id, b.workspaceId));
    expect(await indexRowsWith("platypus")).toBe(1);
    await assertIndexConsistent();
  });

  test("a token pinned to a note finds only that note; an append-only token may not search; folder_id narrows", async () => {
    const { a, token } = await setup("team");
    const one = (await (await append(token, "one.log", "marmot")).json()).id;
    const two = await createNote(token, { title: "Two", plain_body: "marmot" });
    const pinned = await h.token(a, ["read"], { noteId: one });
    expect(await foundIds(pinned, "marmot")).toEqual([one]);
    const pinnedToTwo = await h.token(a, ["read"], { noteId: two.id });
    expect(await foundIds(pinnedToTwo, "marmot")).toEqual([two.id]);
    const appendOnly = await h.token(a, ["append"]);
    const refused = await search(appendOnly, "marmot");
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe("insufficient_scope");

    const folder = await (await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Zoo" } } })).json();
    expect((await h.request("PATCH", `/api/v1/notes/${two.id}`, { token, body: { note: { folder_id: folder.id } } })).status).toBe(200);
    expect(await foundIds(token, "marmot", `&folder_id=${folder.id}`)).toEqual([two.id]);
    const badFolder = await search(token, "marmot", "&folder_id=nope");
    expect(badFolder.status).toBe(422);
  });

  test("paginated like every list: limit, offset, X-Total-Count and Link; best match first, then newest", async () => {
    const { token } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await createNote(token, { title: `Note ${i}`, plain_body: `ocelot ${"filler ".repeat(i)}` })).id);
      h.clock.advance(1000);
    }
    const first = await search(token, "ocelot", "&limit=3");
    expect(first.status).toBe(200);
    expect(first.headers.get("x-total-count")).toBe("7");
    const link = first.headers.get("link")!;
    expect(link).toContain('rel="next"');
    expect(link).toContain("q=ocelot");
    expect(link).toContain("offset=3");
    const page1 = ((await first.json()) as { id: string }[]).map((n) => n.id);
    // bm25 favours the shortest body: the note without filler first.
    expect(page1[0]).toBe(ids[0]);
    const page2 = await foundIds(token, "ocelot", "&limit=3&offset=3");
    const page3 = await foundIds(token, "ocelot", "&limit=3&offset=6");
    expect([...page1, ...page2, ...page3].sort()).toEqual([...ids].sort());
    expect(page3).toHaveLength(1);
    // Past the end: an empty page that still says how many there are.
    const past = await search(token, "ocelot", "&limit=3&offset=30");
    expect(await past.json()).toEqual([]);
    expect(past.headers.get("x-total-count")).toBe("7");
    expect((await search(token, "ocelot", "&limit=0")).status).toBe(422);
  });

  test("what users type is searched as text: FTS syntax never reaches the parser, bad queries are 400 and nothing is a 500", async () => {
    const { token } = await setup();
    const id = (await (await append(token, "words.log", 'rock AND roll, "quoted" text, near(by) -minus col:val ^caret star*')).json()).id;
    // Operators are words like any other: "AND" finds the word and; NEAR( is the word near next to "rock", which the text lacks.
    const notFound = new Set(["OR roll", "NEAR(rock roll)"]);
    for (const q of ["AND", "roll AND", '"quoted"', "near(by)", "-minus", "col:val", "^caret", "star*", 'quoted"', "NEAR(rock roll)", "OR roll"]) {
      const res = await search(token, q);
      expect(res.status).toBe(200);
      expect({ q, found: ((await res.json()) as { id: string }[]).map((n) => n.id) }).toEqual({ q, found: notFound.has(q) ? [] : [id] });
    }
    for (const q of ['"', "*", "(", ")", "-", ":", "^", "{", "NOT", "a OR b", "\u0000", "'; DROP TABLE notes; --", "x".repeat(200), "日本語", "🙂 x", "\\"]) {
      const res = await search(token, q);
      expect([200, 400]).toContain(res.status);
    }
    await expect400(await h.request("GET", "/api/v1/search", { token }));
    await expect400(await search(token, ""));
    await expect400(await search(token, "   "));
    await expect400(await search(token, '" * ( ) - : ^'));
    await expect400(await search(token, "x".repeat(201)));
    await expect400(await search(token, Array.from({ length: 17 }, (_, i) => `w${i}`).join(" ")));
    // The limit counts characters, not bytes.
    expect((await search(token, "é".repeat(200))).status).toBe(200);
  });

  test("the OpenAPI document describes the route with its query and named hit model", async () => {
    await setup();
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    const op = doc.paths["/api/v1/search"].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["q", "limit", "offset", "folder_id"]));
    expect(op.responses["200"].content["application/json"].schema.items.$ref).toBe("#/components/schemas/SearchHit");
    expect(op.responses["400"]).toBeDefined();
    expect(doc.components.schemas.SearchHit.required).toEqual(expect.arrayContaining(["id", "title", "filename", "kind", "folder_id", "updated_at", "snippet"]));
  });
});

describe("the index and the writer's transactions", () => {
  test("a write that fails after changing indexed text rolls its index rows back with it, in a batch with appends that commit", async () => {
    const { token } = await setup();
    const note = await createNote(token, { title: "Stable", plain_body: "original words" });
    // One batch: an append (coalesced, no savepoint), a write that changes indexed text and then
    // fails (its savepoint rolled back, FTS5's pending rows with it), and another append.
    const ctx = { deps: h.deps, principal: await lookupPrincipal(h.deps, token) };
    const first = appendByFilename({ ctx, filename: "batch.log", text: "before the failure" });
    const failing = h.deps.writer.write(async () => {
      await h.deps.db.update(notes).set({ title: "vanished", body: "phantom words" }).where(eq(notes.id, note.id));
      await h.deps.db.insert(noteChunks).values({ noteId: note.id, text: "ghost line", at: 0 });
      throw new AppError("conflict", "refused after writing");
    });
    const batchesBefore = h.deps.writer.stats.batches;
    const results = await Promise.allSettled([
      first,
      failing,
      appendByFilename({ ctx, filename: "batch.log", text: "after the failure" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(h.deps.writer.stats.batches - batchesBefore).toBe(1);
    expect(await foundIds(token, "phantom")).toEqual([]);
    expect(await foundIds(token, "vanished")).toEqual([]);
    expect(await foundIds(token, "ghost")).toEqual([]);
    expect(await foundIds(token, "original")).toEqual([note.id]);
    expect((await foundIds(token, "failure")).length).toBe(1);
    expect(await indexRowsWith("failure")).toBe(2);
    await assertIndexConsistent();
  });
});

describe("the index in a backup", () => {
  // `notestream backup` (VACUUM INTO) and FTS5's tables are SQLite's; PostgreSQL's indexes are rebuilt from the rows by any restore.
  test.skipIf(onPostgres)("a copy made as `notestream backup` makes it (VACUUM INTO) keeps the index in step with the text", async () => {
    const { token } = await setup();
    const stream = (await (await append(token, "kept.log", "pangolin one")).json()).id;
    await append(token, "kept.log", "pangolin two");
    const note = await createNote(token, { title: "Kept", plain_body: "pangolin three" });
    // Gaps in the rowids: VACUUM renumbers the rows of tables without an integer key (notes), not these.
    await append(token, "gone.log", "filler");
    expect((await h.request("DELETE", `/api/v1/notes/${(await (await append(token, "gone.log", "x")).json()).id}`, { token })).status).toBe(200);
    h.clock.advance(31 * DAY);
    await runTask(h.deps, "trash-purge");
    await indexSearchNow(h.deps);
    const target = join(h.dataDir, "backup.db");
    h.deps.db.$client.run("VACUUM INTO ?", [target]);
    const { Database } = await import("bun:sqlite");
    const copy = new Database(target);
    try {
      copy.run("INSERT INTO search_chunks (search_chunks, rank) VALUES ('integrity-check', 1)");
      copy.run("INSERT INTO search_notes (search_notes, rank) VALUES ('integrity-check', 0)");
      const chunkNotes = copy.query<{ id: string }, []>("SELECT DISTINCT c.note_id AS id FROM search_chunks JOIN note_chunks c ON c.seq = search_chunks.rowid WHERE search_chunks MATCH '\"pangolin\"'").all();
      const noteIds = copy.query<{ id: string }, []>("SELECT note_id AS id FROM search_notes WHERE search_notes MATCH 'body : \"pangolin\"'").all();
      expect(chunkNotes.map((r) => r.id)).toEqual([stream]);
      expect(noteIds.map((r) => r.id)).toEqual([note.id]);
    } finally {
      copy.close();
    }
  });
});

describe("the index on upgrade", () => {
  // SQLite's migration 0013 and its FTS5 tables; the PostgreSQL counterpart is below.
  test.skipIf(onPostgres)("migrations 0013 and 0019 index what an earlier release wrote", async () => {
    const { token } = await setup();
    const stream = (await (await append(token, "old.log", "axolotl spotted")).json()).id;
    const note = await createNote(token, { title: "Old note", plain_body: "axolotl again" });
    const sqlite = h.deps.db.$client;
    // The database as the previous release left it: no search objects at all.
    for (const { type, name } of sqlite.query<{ type: string; name: string }, []>("SELECT type, name FROM sqlite_master WHERE name LIKE 'search_%' AND type IN ('trigger', 'view')").all()) {
      sqlite.run(`DROP ${type.toUpperCase()} ${name}`);
    }
    sqlite.run("DROP TABLE search_chunks");
    sqlite.run("DROP TABLE search_notes");
    sqlite.run("DROP TABLE search_chunks_indexed");
    for (const file of ["0013_search.sql", "0019_search_behind_commit.sql"]) {
      for (const statement of readFileSync(join(import.meta.dir, "../../migrations", file), "utf8").split("--> statement-breakpoint")) sqlite.run(statement);
    }
    // 0019 takes what 0013 indexed as indexed (its watermark at the newest chunk), so it re-indexes nothing.
    const newest = sqlite.query<{ seq: number }, []>("SELECT max(seq) AS seq FROM note_chunks").get()!.seq;
    expect(sqlite.query("SELECT through FROM search_chunks_indexed").all()).toEqual([{ through: newest }]);
    await assertIndexConsistent();
    expect((await foundIds(token, "axolotl")).sort()).toEqual([stream, note.id].sort());
    await assertIndexConsistent();
    // And it keeps up from there.
    expect((await append(token, "old.log", "salamander too")).status).toBe(200);
    expect(await foundIds(token, "salamander")).toEqual([stream]);
  });
});

describe.skipIf(!onPostgres)("the index on PostgreSQL", () => {
  test("a search reads the GIN indexes over the chunks and over the titles and bodies", async () => {
    const { a, token } = await setup();
    for (let i = 0; i < 40; i++) await append(token, `s${i % 4}.log`, `line ${i}: ${i % 10 === 0 ? "wolverine" : "routine"} output`);
    for (let i = 0; i < 10; i++) await createNote(token, { title: `Note ${i}`, plain_body: i === 3 ? "wolverine seen" : "nothing much" });
    await sqlRun(h.deps.store, "ANALYZE");
    const query = new PgDialect().sqlToQuery(pgPageQuery(["wolverine", "host-3"], { workspaceId: a.workspaceId, noteId: null, folderId: null }, { limit: 20, offset: 0 }));
    // With scans of whole tables and of whole indexes ruled out, only an index whose expression is the query's can answer.
    const explain = (text: string, params: unknown[]) =>
      withIndexesOnly(async (tx) => {
        await tx`SET LOCAL enable_indexscan = off`;
        return ((await tx.unsafe(`EXPLAIN ${text}`, params)) as { "QUERY PLAN": string }[]).map((r) => r["QUERY PLAN"]).join("\n");
      });
    const plan = await explain(query.sql, query.params as unknown[]);
    expect(plan).toContain("Bitmap Index Scan on note_chunks_search");
    // The titles and bodies of a small workspace are read through its notes (notes_workspace_format): the vector the query
    // asks for is the index's all the same.
    const notesPlan = await explain(`SELECT n.id FROM notes n WHERE ${PG_VECTORS.notes} @@ phraseto_tsquery('notestream_search', $1)`, ["wolverine"]);
    expect(notesPlan).toContain("Bitmap Index Scan on notes_search");
    expect(await foundIds(token, "wolverine")).toHaveLength(3);
  });

  test("words are unicode61's: notestream_search_text() makes a space of no letter, digit or private use, and of every other ASCII character", async () => {
    await setup();
    const rows = await sqlRows<{ c: number }>(h.deps.store, "SELECT c FROM generate_series(1, 131071) c WHERE (c < 55296 OR c > 57343) AND notestream_search_text(chr(c)) = ' '");
    const separators = rows.map((r) => Number(r.c));
    expect(separators.filter((c) => /[\p{L}\p{N}\p{Co}]/u.test(String.fromCodePoint(c))).map((c) => c.toString(16))).toEqual([]);
    expect(separators.filter((c) => c < 128)).toHaveLength(127 - 62);
    // The writer's separators beyond ASCII (pg-vector.ts) are all among them.
    const known = Array.from({ length: 131071 - 127 }, (_, i) => i + 128).filter((c) => (c < 55296 || c > 57343) && isKnownSeparator(String.fromCodePoint(c)));
    expect(known.length).toBeGreaterThan(5000);
    const pgSeparators = new Set(separators);
    expect(known.filter((c) => !pgSeparators.has(c)).map((c) => c.toString(16))).toEqual([]);
  });

  test("migrations 0002, 0005, 0006 and 0008 index what was written before them", async () => {
    const { token } = await setup();
    const stream = (await (await append(token, "old.log", "axolotl spotted")).json()).id;
    const note = await createNote(token, { title: "Old note", plain_body: "axolotl again" });
    // The database as migration 0001 left it: no search objects at all (the vectors and indexes go with the function).
    await sqlRun(h.deps.store, "DROP TRIGGER note_chunks_search_vector ON note_chunks");
    await sqlRun(h.deps.store, "DROP FUNCTION notestream_chunk_search_vector");
    await sqlRun(h.deps.store, "ALTER TABLE note_chunks DROP COLUMN search_vector");
    await sqlRun(h.deps.store, "DROP FUNCTION notestream_search_text CASCADE");
    await sqlRun(h.deps.store, "DROP TEXT SEARCH CONFIGURATION notestream_search");
    await sqlRun(h.deps.store, "DROP EXTENSION unaccent");
    for (const file of ["0002_search.sql", "0005_search_vectors.sql", "0006_chunk_vectors_from_app.sql", "0008_search_behind_commit.sql"]) {
      for (const statement of readFileSync(join(import.meta.dir, "../../migrations-pg", file), "utf8").split("--> statement-breakpoint")) {
        await sqlRun(h.deps.store, statement);
      }
    }
    expect((await foundIds(token, "axolotl")).sort()).toEqual([stream, note.id].sort());
    expect(await indexRowsWith("axolotl")).toBe(2);
    // And it keeps up from there.
    expect((await append(token, "old.log", "salamander too")).status).toBe(200);
    expect(await foundIds(token, "salamander")).toEqual([stream]);
    await assertIndexConsistent();
  });

  test("the writer's vector is PostgreSQL's own: thousands of texts, the parser's splits, its limits, symbols, emoji and Latin letters", async () => {
    await setup();
    // A seeded generator: a failure names a text that fails again.
    let seed = 21;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const ascii = [..."eeeeeeabcdeEfxXI0123456789012345678901234567890 \n\t.-_=:/@<>&;+#'\"\\%$!?,()[]{}|~^`*\x01\x7f"];
    // Separators beyond ASCII that the writer knows (a no-break space, dashes, …, arrows, ✓, emoji with a skin tone and ZWJ).
    const symbols = [..."\u00a0«»×÷—–…“”→⇒✓✗│└🎉👍🏽\u200d\ufe0f\u3000"];
    const text = (n: number, alphabet = ascii) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    const texts = [
      "", " ", "\n\n", "user=bob", "User=BOB host=API.example.com", "1e5", "1e5abc", "12e5x5", "12e5e5", "123e4567abc", "1e5a1e5b", "12e", "12ex", "0x1F",
      "-1.5e-3", "a-b-c", "foo@bar.com", "http://x.y/z?q=1", "<b>x</b>", "&amp;", "v1.2.3", "12.50", "\x01\x7f",
      `2026-11-23T01:16:00Z INFO web-3 deploy 4f2a1c ok in 42s user=alice req=9f8e7d6c took 12ms`,
      // Words at PostgreSQL's limits: 2,046 bytes is indexed, 2,047 is left out and takes no position (and as a literal, refused).
      "x".repeat(2046), "x".repeat(2047), `a ${"x".repeat(2048)} b`,
      // A word's positions past 255, every word's past 16,383, and the 200,000 characters indexed (a word cut at the end).
      `${"w ".repeat(300)}z`, "y ".repeat(20_000), `${"ab ".repeat(70_000)}tail`, `${"x".repeat(199_995)} cut-here`,
    ];
    for (let i = 0; i < 1500; i++) texts.push(text(1 + Math.floor(random() * 200)));
    for (let i = 0; i < 100; i++) texts.push(text(5000));
    for (let i = 0; i < 500; i++) texts.push(text(1 + Math.floor(random() * 200), [...ascii, ...symbols, ...symbols]));
    // Latin letters beyond ASCII (pg-vector.ts's LATIN), each alone, inside words, in upper case, after a number in scientific notation.
    const latin = latinLetters();
    // All of U+00C0–U+017F but × and ÷ (separators) and ŉ (left to PostgreSQL).
    expect(latin.length).toBe(0x17f - 0xbf - 3);
    for (const c of latin) texts.push(`${c} x${c}y ${c.toUpperCase()} Z${c.toUpperCase()}Z 1e5${c} ${c}1e5 ${c}${c}${c}`);
    for (let i = 0; i < 500; i++) texts.push(text(1 + Math.floor(random() * 200), [...ascii, ...latin, ...symbols]));
    // PostgreSQL's word limit is in bytes, counted before unaccent: 2,046 of them is indexed, 2,047 is not.
    texts.push(`${"é".repeat(1023)}a b`, `a ${"é".repeat(1024)} b`, `Straße ${"ß".repeat(1200)} Köln`);
    for (const words of boundaryWords()) texts.push(words, `blob ${words} end`);
    texts.push(`✓ ${"ab ".repeat(66_000)}→ tail`);
    // Every one of these the writer computes itself, and this database agrees at start (else the writer would send none).
    expect(texts.filter((t) => chunkSearchVector(t) === null)).toEqual([]);
    expect(await writerVectorsAgree(pgClient())).toBe(true);
    // A literal the database refuses at that check (a word past its limit) means it gets no vectors: the instance still starts.
    const refusing = { unsafe: (q: string, [, text]: unknown[]) => pgClient().unsafe(q, [`'${"x".repeat(2047)}'`, text]) } as unknown as import("bun").SQL;
    expect(await writerVectorsAgree(refusing)).toBe(false);
    const differ: string[] = [];
    for (let i = 0; i < texts.length; i += 200) {
      const slice = texts.slice(i, i + 200);
      const vectors = slice.map(chunkSearchVector);
      const rows = await sqlRows<{ i: number }>(
        h.deps.store,
        `SELECT i FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS v(t, vector, i)
         WHERE v.vector::tsvector IS DISTINCT FROM to_tsvector('notestream_search', notestream_search_text(v.t))`,
        [slice, vectors],
      );
      differ.push(...rows.map((r) => JSON.stringify(slice[Number(r.i) - 1]).slice(0, 120)));
    }
    expect(differ).toEqual([]);
    // Any other letter or digit beyond ASCII is left to PostgreSQL (the writer sends no vector), and so is a text beyond ASCII past 200,000 characters.
    for (const other of ["ΣΊΣΥΦΟΣ", "Кириллица", "日本語のテキスト", "ok 🎉 é ж", "x²", "ŉ", "ǅ", "e\u0301", `→ ${"ab ".repeat(70_000)}`]) {
      expect({ other: other.slice(0, 20), vector: chunkSearchVector(other) }).toEqual({ other: other.slice(0, 20), vector: null });
    }
  });

  test("an index pass whose vector literal PostgreSQL refuses runs again with PostgreSQL computing the vectors: every line is found", async () => {
    const { token } = await setup();
    // A database that refuses the first vector it is given for a chunk holding `poison`, as it
    // refuses a literal with too long a word (SQLSTATE 54000). A sequence counts the tries: it
    // is not rolled back with the refused statement.
    await sqlRun(h.deps.store, "CREATE SEQUENCE poison_tries");
    await sqlRun(
      h.deps.store,
      `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $f$
       BEGIN
         IF NEW.search_vector IS NOT NULL AND NEW.text LIKE '%poison%' AND nextval('poison_tries') = 1 THEN
           RAISE EXCEPTION 'word is too long (2047 bytes, max 2046 bytes)' USING ERRCODE = '54000';
         END IF;
         RETURN NEW;
       END $f$`,
    );
    await sqlRun(h.deps.store, "CREATE TRIGGER a_refuse_poison BEFORE UPDATE OF search_vector ON note_chunks FOR EACH ROW EXECUTE FUNCTION refuse_poison()");
    const ctx = { deps: h.deps, principal: await lookupPrincipal(h.deps, token) };
    const add = (filename: string, text: string) => appendByFilename({ ctx, filename, text });
    const warnings = spyOn(console, "error").mockImplementation(() => {});
    try {
      const appends = await Promise.allSettled([add("a.log", "numbat one"), add("b.log", "poison koala two"), add("c.log", "dingo three"), add("a.log", "numbat four")]);
      expect(appends.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
      await indexSearchNow(h.deps);
      expect(warnings.mock.calls.map((c) => JSON.parse(String(c[0])).level)).toEqual(["warn"]);
    } finally {
      warnings.mockRestore();
    }
    // Every line is indexed, once, with PostgreSQL's vector, and found.
    expect(await sqlRows(h.deps.store, "SELECT count(*)::int AS n FROM note_chunks WHERE search_vector IS NULL")).toEqual([{ n: 0 }]);
    for (const word of ["numbat", "koala", "dingo"]) expect({ word, found: (await foundIds(token, word)).length }).toEqual({ word, found: 1 });
    await assertIndexConsistent();
  });

  test("a chunk's stored vector is PostgreSQL's whoever computed it: the indexer's literal, PostgreSQL for other scripts, an INSERT naming none, an UPDATE of the text", async () => {
    const { token } = await setup();
    for (const line of ["plain ASCII user=bob took 12ms", "Grüße aus Köln", "ΣΊΣΥΦΟΣ rolled İstanbul", "deploy 🎉 done", "1e5abc EXP"]) {
      expect((await append(token, "mixed.log", line)).status).toBeLessThan(300);
    }
    const stream = (await (await append(token, "mixed.log", "last one")).json()).id as string;
    // An INSERT that names no vector (any but the append's) is indexed by the next pass all the same.
    await sqlRun(h.deps.store, "INSERT INTO note_chunks (note_id, text, at) VALUES (?, ?, ?)", [stream, "\nwombat from an older binary", Date.now()]);
    expect(await foundIds(token, "wombat")).toEqual([stream]);
    // A text changed in place gets its vector again, even when the row's old vector is left as it was.
    await sqlRun(h.deps.store, "UPDATE note_chunks SET text = replace(text, 'wombat', 'quokka') WHERE text LIKE '%wombat%'");
    expect(await foundIds(token, "wombat")).toEqual([]);
    expect(await foundIds(token, "quokka")).toEqual([stream]);
    for (const word of ["grusse", "köln", "σίσυφος", "istanbul", "1e5", "abc", "user=bob"]) expect({ word, found: await foundIds(token, word) }).toEqual({ word, found: [stream] });
    await assertIndexConsistent();
  });

  test("a database that tokenizes unlike the writer (another locale's lower case) gets no vectors from it: PostgreSQL computes every one", async () => {
    const { token } = await setup();
    // What a database without ICU under a Turkish locale does to `I`, made visible: its own folding of text, o as 0.
    await sqlRun(
      h.deps.store,
      `CREATE OR REPLACE FUNCTION notestream_search_text(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
       AS $b$SELECT replace(regexp_replace(lower(t), '[^[:alnum:]]', ' ', 'g'), 'o', '0')$b$`,
    );
    await h.stop();
    h = await harness({ dataDir: h.dataDir });
    expect((await append(token, "folded.log", "Quokka spotted near the dock")).status).toBe(201);
    await indexSearchNow(h.deps);
    const rows = await sqlRows<{ v: string; own: boolean }>(
      h.deps.store,
      "SELECT search_vector::text AS v, search_vector = to_tsvector('notestream_search', notestream_search_text(text)) AS own FROM note_chunks WHERE text LIKE 'Quokka%'",
    );
    expect(rows).toEqual([{ v: "'d0ck':5 'near':3 'qu0kka':1 'sp0tted':2 'the':4", own: true }]);
    // Search folds the query the database's way, so it finds the line.
    expect(await foundIds(token, "quokka")).toHaveLength(1);
  });

  test("a search tokenizes no stored text: a word of several tokens and a word in every row read the stored vectors", async () => {
    const { a, token } = await setup();
    // Log lines in which every chunk holds `user` and `bob`, and `login` is in every row: the
    // cases where the index alone cannot answer (a phrase) or the planner reads every row.
    for (let i = 0; i < 60; i++) {
      expect((await append(token, `app${i % 3}.log`, `level=info user=${i % 4 === 0 ? "bob" : "alice"} action=login bob=${i}`)).status).toBeLessThan(300);
    }
    await createNote(token, { title: "Runbook", plain_body: "login as user=bob first" });
    await sqlRun(h.deps.store, "ANALYZE");
    const filter = { workspaceId: a.workspaceId, noteId: null, folderId: null };
    for (const words of [["user=bob"], ["login"]]) {
      const query = new PgDialect().sqlToQuery(pgPageQuery(words, filter, { limit: 20, offset: 0 }));
      const plan = ((await pgClient().unsafe(`EXPLAIN ${query.sql}`, query.params as unknown[])) as { "QUERY PLAN": string }[])
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      // Before 0005 a row's vector was computed in the scan's filter or the bitmap's recheck: to_tsvector(... notestream_search_text(text)).
      expect({ words, plan }).toEqual({ words, plan: expect.not.stringContaining("to_tsvector(") });
      expect(plan).toContain("search_vector @@");
    }
    // The same answers as ever: user=bob is the phrase, not both words anywhere in a line.
    expect((await foundIds(token, "user=bob")).length).toBe(4);
    expect((await foundIds(token, "login")).length).toBe(4);
  });
});

describe("MCP list_notes with a query", () => {
  test("searches through the SDK's client: hits with snippets, total, and the same refusals", async () => {
    const { a, token } = await setup();
    const handle = buildHandler(h.deps);
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r, srv) => handle(r, srv.requestIP(r)?.address) });
    const base = `http://127.0.0.1:${server.port}`;
    const id = (await (await append(token, "agents.log", "the tapir ate the plan")).json()).id;
    await createNote(token, { title: "Unrelated", plain_body: "nothing here" });
    client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${await h.token(a, ["read"])}` } } }));
    await indexSearchNow(h.deps);
    const found = await tool(client, "list_notes", { query: "tapir" });
    expect(found.total).toBe(1);
    expect(found.notes).toHaveLength(1);
    expect(found.notes[0]).toMatchObject({ id, filename: "agents.log", snippet: "the **tapir** ate the plan" });
    // Without a query it lists as before.
    expect((await tool(client, "list_notes", {})).total).toBe(2);
    expect((await tool(client, "list_notes", { query: "tapir plan", limit: 1 })).notes[0].id).toBe(id);
    expect((await tool(client, "list_notes", { query: "zebra" })).notes).toEqual([]);
    expect(await toolError(client, "list_notes", { query: "   " })).toStartWith("bad_request: q must not be empty");
    expect(await toolError(client, "list_notes", { query: "" })).toStartWith("validation_failed: query");
    expect((await client.listTools()).tools).toHaveLength(3);
    // `notestream mcp` (stdio) asks the REST API instead: the same hits and total.
    const rest = new RestBackend(base, token);
    const overRest = await rest.listNotes({ query: "tapir" });
    expect(overRest.total).toBe(1);
    expect(overRest.notes[0]).toMatchObject({ id, snippet: "the **tapir** ate the plan" });
    expect((await rest.listNotes({})).total).toBe(2);
    await expect(rest.listNotes({ query: "***" })).rejects.toThrow("q has no word to search for");
  });
});
