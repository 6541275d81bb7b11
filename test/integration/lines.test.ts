import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq, min } from "drizzle-orm";
import { join } from "node:path";
import { CHANGES_CHANNEL } from "../../src/db/pg/other-writers";
import { noteChunks } from "../../src/db/tables";
import { mintExtensionToken } from "../../src/modules/tokens/service";
import { followers } from "../../src/modules/streams/follow";
import { errorOf, harness, onPostgres, type Harness } from "../helpers/harness";
import { sseReader } from "../helpers/sse";

let h: Harness;
let owner: { accountId: string; workspaceId: string; email: string };
let token: string;
beforeEach(async () => {
  h = await harness();
  owner = await h.account("dev");
  token = await h.token(owner, ["read", "write"]);
});
afterEach(async () => {
  followers(h.deps).closeAll();
  await h.close();
});

const append = (filename: string, text: string, t = token) =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token: t, body: { text } });
const lines = (path: string, t = token) => h.request("GET", path, { token: t });
const follow = (path: string, headers: Record<string, string> = {}, t = token) =>
  h.request("GET", path, { token: t, headers: { accept: "text/event-stream", ...headers } });
const b64 = (s: string) => Buffer.from(s).toString("base64url");

/** `n` lines of exactly `width` bytes with the LF, numbered from `from`. */
function block(prefix: string, from: number, n: number, width = 100): string {
  let s = "";
  for (let i = from; i < from + n; i++) s += `${prefix} ${String(i).padStart(7, "0")} `.padEnd(width - 1, "x") + "\n";
  return s;
}

/**
 * A stream of about 3 MB, made quickly: a first line, three appends of 1 MB (10,000 lines of 100
 * bytes each) and then 100 one-line appends, one a second.
 */
async function bigStream(filename = "big.log") {
  const first = await append(filename, "first line");
  expect(first.status).toBe(201);
  const id = (await first.json()).id as string;
  const firstCursor = (await (await lines(`/api/v1/notes/${id}/lines?last=1`)).json()).cursor as string;
  for (let b = 0; b < 3; b++) expect((await append(filename, block(`big${b}`, 0, 10_000))).status).toBe(200);
  const smallStart = h.clock.now();
  for (let i = 0; i < 100; i++) {
    h.clock.advance(1000);
    expect((await append(filename, `small ${i}`)).status).toBe(200);
  }
  const body = (await (await lines(`/api/v1/notes/${id}`)).json()).plain_body as string;
  expect(body.length).toBeGreaterThan(3_000_000);
  return { id, firstCursor, smallStart, body };
}

describe("GET /notes/{id}/lines", () => {
  test("last=N on a 3 MB stream: the newest N lines, oldest first, each with its append time and cursor", async () => {
    const { id, smallStart } = await bigStream();
    const res = await lines(`/api/v1/notes/${id}/lines?last=150`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-bucket")).toBe("reads");
    const page = await res.json();
    expect(page.lines).toHaveLength(150);
    // 50 lines of the last 1 MB append (a chunk of 10,000 lines), then the 100 small ones.
    expect(page.lines[0].text).toBe(`big2 0009950 `.padEnd(99, "x"));
    expect(page.lines[49].text).toBe(`big2 0009999 `.padEnd(99, "x"));
    expect(page.lines.slice(50).map((l: any) => l.text)).toEqual(Array.from({ length: 100 }, (_, i) => `small ${i}`));
    expect(page.lines[50].at).toBe(new Date(smallStart + 1000).toISOString());
    expect(page.lines[149].at).toBe(new Date(smallStart + 100_000).toISOString());
    expect(page.lines[0].at).toBe(new Date(smallStart).toISOString());
    expect(new Set(page.lines.map((l: any) => l.cursor)).size).toBe(150);
    expect(page.cursor).toBe(page.lines[149].cursor);
    // Cursors are opaque: URL-safe text.
    for (const l of page.lines) expect(l.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  test("last defaults to 100 and above 1,000 is read as 1,000; other values are 422 naming last", async () => {
    const { id } = await bigStream();
    expect((await (await lines(`/api/v1/notes/${id}/lines`)).json()).lines).toHaveLength(100);
    expect((await (await lines(`/api/v1/notes/${id}/lines?last=5000`)).json()).lines).toHaveLength(1000);
    expect((await (await lines(`/api/v1/notes/${id}/lines?last=99999999999999999999`)).json()).lines).toHaveLength(1000);
    for (const bad of ["0", "-1", "1.5", "1e3", "abc", "", "0x10"]) {
      const res = await lines(`/api/v1/notes/${id}/lines?last=${bad}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 422 });
      expect((await errorOf(res)).details[0].field).toBe("last");
    }
  });

  test("a cursor pages through a 3 MB stream, oldest first, every line exactly once", async () => {
    const { id, firstCursor, body } = await bigStream();
    const seen: string[] = [];
    let cursor = firstCursor;
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(40);
      const page = await (await lines(`/api/v1/notes/${id}/lines?cursor=${cursor}&limit=1000`)).json();
      if (page.lines.length === 0) {
        expect(page.cursor).toBe(cursor);
        break;
      }
      expect(page.lines.length).toBeLessThanOrEqual(1000);
      for (const l of page.lines) seen.push(l.text);
      expect(page.cursor).toBe(page.lines[page.lines.length - 1].cursor);
      cursor = page.cursor;
    }
    expect(["first line", ...seen].join("\n") + "\n").toBe(body);
  });

  test("lines after a cursor are only the newer ones; limit defaults to 100 and is read as 1,000 above that", async () => {
    const { id, firstCursor } = await bigStream();
    const at = (await (await lines(`/api/v1/notes/${id}/lines?last=1000`)).json()).lines[0].cursor;
    expect((await (await lines(`/api/v1/notes/${id}/lines?cursor=${at}`)).json()).lines).toHaveLength(100);
    expect((await (await lines(`/api/v1/notes/${id}/lines?cursor=${at}&limit=5000`)).json()).lines).toHaveLength(999);
    const page = await (await lines(`/api/v1/notes/${id}/lines?cursor=${firstCursor}&limit=5000`)).json();
    expect(page.lines).toHaveLength(1000);
    expect(page.lines[0].text).toBe(`big0 0000000 `.padEnd(99, "x"));
    const end = (await (await lines(`/api/v1/notes/${id}/lines?last=1`)).json()).cursor;
    await append("big.log", "one more\nand another");
    const newer = await (await lines(`/api/v1/notes/${id}/lines?cursor=${end}`)).json();
    expect(newer.lines.map((l: any) => l.text)).toEqual(["one more", "and another"]);
    expect(newer.cursor).toBe(newer.lines[1].cursor);
  });

  test("a malformed cursor is 422 naming cursor; limit=0 and other bad limits name limit", async () => {
    const { id } = (await (await append("s.log", "x")).json()) as { id: string };
    const bad = ["", "!!!", "%20", b64("abc"), b64("1.x"), b64("-1.0"), b64("1.2.3"), b64("1"), b64("99999999999999999999.0"), b64("1.99999999999"), "A".repeat(200)];
    for (const c of bad) {
      const res = await lines(`/api/v1/notes/${id}/lines?cursor=${encodeURIComponent(c)}`);
      expect({ c, status: res.status }).toEqual({ c, status: 422 });
      const err = await errorOf(res);
      expect(err.code).toBe("validation_failed");
      expect(err.details[0].field).toBe("cursor");
    }
    const good = (await (await lines(`/api/v1/notes/${id}/lines?last=1`)).json()).cursor;
    for (const l of ["0", "-2", "x"]) {
      const res = await lines(`/api/v1/notes/${id}/lines?cursor=${good}&limit=${l}`);
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details[0].field).toBe("limit");
    }
  });

  test("last with a cursor, or limit without one, is 422: the two ways to read do not mix", async () => {
    const { id } = (await (await append("s.log", "x")).json()) as { id: string };
    const good = (await (await lines(`/api/v1/notes/${id}/lines?last=1`)).json()).cursor;
    const both = await lines(`/api/v1/notes/${id}/lines?last=5&cursor=${good}`);
    expect(both.status).toBe(422);
    expect((await errorOf(both)).details[0].field).toBe("last");
    const limitAlone = await lines(`/api/v1/notes/${id}/lines?limit=5`);
    expect(limitAlone.status).toBe(422);
    expect((await errorOf(limitAlone)).details[0].field).toBe("limit");
  });

  test("a cursor into lines already removed by retention continues from the oldest remaining line", async () => {
    const { id } = (await (await append("r.log", "one\ntwo")).json()) as { id: string };
    const old = (await (await lines(`/api/v1/notes/${id}/lines?last=2`)).json()).lines[0].cursor;
    await append("r.log", "three");
    await append("r.log", "four");
    // What drop_oldest and retention_days do: whole chunks go, oldest first.
    const [oldest] = await h.deps.db.select({ seq: min(noteChunks.seq) }).from(noteChunks).where(eq(noteChunks.noteId, id));
    await h.deps.db.delete(noteChunks).where(eq(noteChunks.seq, oldest!.seq!));
    const page = await (await lines(`/api/v1/notes/${id}/lines?cursor=${old}`)).json();
    expect(page.lines.map((l: any) => l.text)).toEqual(["three", "four"]);
    // Every chunk gone: nothing to read, and the cursor stays.
    await h.deps.db.delete(noteChunks).where(eq(noteChunks.noteId, id));
    const empty = await (await lines(`/api/v1/notes/${id}/lines?cursor=${old}`)).json();
    expect(empty).toEqual({ lines: [], cursor: old });
    const last = await (await lines(`/api/v1/notes/${id}/lines?last=10`)).json();
    expect(last.lines).toEqual([]);
    // The cursor of an empty stream reads whatever comes next.
    await append("r.log", "five");
    expect((await (await lines(`/api/v1/notes/${id}/lines?cursor=${last.cursor}`)).json()).lines.map((l: any) => l.text)).toEqual(["five"]);
  });

  test("by filename, URL-encoded, the same answer as by id", async () => {
    const { id } = (await (await append("café log", "a\nb\nc")).json()) as { id: string };
    const byId = await (await lines(`/api/v1/notes/${id}/lines?last=2`)).json();
    const byName = await lines(`/api/v1/notes/by-filename/caf%C3%A9%20log/lines?last=2`);
    expect(byName.status).toBe(200);
    expect(await byName.json()).toEqual(byId);
    expect(byId.lines.map((l: any) => l.text)).toEqual(["b", "c"]);
    expect((await lines(`/api/v1/notes/by-filename/missing.log/lines`)).status).toBe(404);
  });

  test("an editable note is 422 not_a_stream; a missing or foreign note is 404", async () => {
    const note = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t", plain_body: "b\n" } } })).json();
    const res = await lines(`/api/v1/notes/${note.id}/lines`);
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "id", code: "not_a_stream" });
    expect((await lines(`/api/v1/notes/note_missing/lines`)).status).toBe(404);
    const other = await h.token(await h.account("dev"), ["read", "write"]);
    const { id } = (await (await append("mine.log", "x")).json()) as { id: string };
    expect((await lines(`/api/v1/notes/${id}/lines`, other)).status).toBe(404);
    expect((await lines(`/api/v1/notes/by-filename/mine.log/lines`, other)).status).toBe(404);
  });

  test("read scope: append-only and extension tokens are 403; a pinned token reads its own note only", async () => {
    const { id } = (await (await append("mine.log", "x")).json()) as { id: string };
    await append("other.log", "y");
    const appendOnly = await h.token(owner, ["append"]);
    const ext = (await h.deps.writer.write(() => mintExtensionToken(h.deps, { ...owner, noteId: id }))).token;
    for (const t of [appendOnly, ext]) {
      const res = await lines(`/api/v1/notes/${id}/lines`, t);
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("insufficient_scope");
      expect((await follow(`/api/v1/notes/${id}/lines`, {}, t)).status).toBe(403);
    }
    const pinned = await h.token(owner, ["read"], { noteId: id });
    expect((await lines(`/api/v1/notes/${id}/lines`, pinned)).status).toBe(200);
    expect((await lines(`/api/v1/notes/by-filename/other.log/lines`, pinned)).status).toBe(404);
    expect((await follow(`/api/v1/notes/by-filename/other.log/lines`, {}, pinned)).status).toBe(404);
  });
});

describe("following with Accept: text/event-stream", () => {
  test("each new line is an event whose id is its cursor, starting after the current last line", async () => {
    const { id } = (await (await append("f.log", "before")).json()) as { id: string };
    const res = await follow(`/api/v1/notes/${id}/lines`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("cache-control")).toContain("no-cache");
    const sse = sseReader(res.body!);
    h.clock.advance(5000);
    await append("f.log", "one\ntwo");
    await append("f.log", "three");
    const events = await sse.take(3);
    expect(events.map((e) => JSON.parse(e.data))).toEqual([
      { text: "one", at: new Date(h.clock.now()).toISOString() },
      { text: "two", at: new Date(h.clock.now()).toISOString() },
      { text: "three", at: new Date(h.clock.now()).toISOString() },
    ]);
    // The ids are the cursors the lines API gives.
    const page = await (await lines(`/api/v1/notes/${id}/lines?last=3`)).json();
    expect(events.map((e) => e.id)).toEqual(page.lines.map((l: any) => l.cursor));
    await sse.close();
  });

  test("Last-Event-ID resumes after that line and wins over ?cursor=; last=N replays the newest N first", async () => {
    const { id } = (await (await append("f.log", "a\nb\nc\nd")).json()) as { id: string };
    const page = await (await lines(`/api/v1/notes/${id}/lines?last=4`)).json();
    const [a, b] = page.lines.map((l: any) => l.cursor);
    const byHeader = sseReader((await follow(`/api/v1/notes/${id}/lines?cursor=${a}`, { "last-event-id": b })).body!);
    expect((await byHeader.take(2)).map((e) => JSON.parse(e.data).text)).toEqual(["c", "d"]);
    const byQuery = sseReader((await follow(`/api/v1/notes/${id}/lines?cursor=${a}`)).body!);
    expect((await byQuery.take(3)).map((e) => JSON.parse(e.data).text)).toEqual(["b", "c", "d"]);
    const replay = sseReader((await follow(`/api/v1/notes/${id}/lines?last=2`)).body!);
    expect((await replay.take(2)).map((e) => JSON.parse(e.data).text)).toEqual(["c", "d"]);
    await append("f.log", "e");
    for (const s of [byHeader, byQuery, replay]) {
      expect((await s.take(1)).map((e) => JSON.parse(e.data).text)).toEqual(["e"]);
      await s.close();
    }
    const bad = await follow(`/api/v1/notes/${id}/lines`, { "last-event-id": "nonsense!" });
    expect(bad.status).toBe(422);
    expect((await errorOf(bad)).details[0].field).toBe("Last-Event-ID");
  });

  test("an open stream is charged once to the read bucket, however many events it carries", async () => {
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const before = Number((await lines(`/api/v1/notes/${id}/lines?last=1`)).headers.get("x-ratelimit-remaining"));
    const res = await follow(`/api/v1/notes/${id}/lines`);
    expect(res.headers.get("x-ratelimit-bucket")).toBe("reads");
    const sse = sseReader(res.body!);
    for (let i = 0; i < 20; i++) await append("f.log", `line ${i}`);
    await sse.take(20);
    const after = Number((await lines(`/api/v1/notes/${id}/lines?last=1`)).headers.get("x-ratelimit-remaining"));
    expect(before - after).toBe(2);
    await sse.close();
  });

  test("the 11th open stream of a token is 429 with Retry-After; closing one frees its slot", async () => {
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const open = [];
    for (let i = 0; i < 10; i++) {
      const res = await follow(`/api/v1/notes/${id}/lines`);
      expect(res.status).toBe(200);
      open.push(sseReader(res.body!));
    }
    const eleventh = await follow(`/api/v1/notes/${id}/lines`);
    expect(eleventh.status).toBe(429);
    expect(Number(eleventh.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await errorOf(eleventh)).code).toBe("rate_limited");
    // Another token of the same workspace has its own ten.
    const second = await h.token(owner, ["read"]);
    const other = await follow(`/api/v1/notes/${id}/lines`, {}, second);
    expect(other.status).toBe(200);
    await sseReader(other.body!).close();
    // Plain reads are not affected.
    expect((await lines(`/api/v1/notes/${id}/lines`)).status).toBe(200);
    await open.pop()!.close();
    await Bun.sleep(20);
    const again = await follow(`/api/v1/notes/${id}/lines`);
    expect(again.status).toBe(200);
    open.push(sseReader(again.body!));
    for (const s of open) await s.close();
  });

  test("past the server-wide maximum (NOTESTREAM_SSE_MAX) every token gets 429", async () => {
    await h.close();
    h = await harness({ env: { NOTESTREAM_SSE_MAX: "2" } });
    owner = await h.account("dev");
    token = await h.token(owner, ["read", "write"]);
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const a = sseReader((await follow(`/api/v1/notes/${id}/lines`)).body!);
    const b = sseReader((await follow(`/api/v1/notes/${id}/lines`, {}, await h.token(owner, ["read"]))).body!);
    const third = await follow(`/api/v1/notes/${id}/lines`, {}, await h.token(owner, ["read"]));
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).not.toBeNull();
    await a.close();
    await b.close();
  });

  test("comment heartbeats keep the connection alive; a deleted note ends its followers", async () => {
    followers(h.deps).heartbeatMs = 30;
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const sse = sseReader((await follow(`/api/v1/notes/${id}/lines`)).body!);
    expect((await sse.comment(2000)).length).toBeGreaterThan(0);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    await sse.ended(2000);
    expect(followers(h.deps).size).toBe(0);
  });

  // SQLite only: another process's commit is seen in data_version, polled; on PostgreSQL nothing
  // is polled and other instances announce their commits (the next test).
  test.skipIf(onPostgres)("lines written by another process (the CLI) are found by the periodic re-check", async () => {
    followers(h.deps).recheckMs = 30;
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const sse = sseReader((await follow(`/api/v1/notes/${id}/lines`)).body!);
    const other = new Database(join(h.dataDir, "notestream.db"));
    other.run("INSERT INTO note_chunks (note_id, text, at) VALUES (?, ?, ?)", [id, "from elsewhere\n", h.clock.now()]);
    other.close();
    expect((await sse.take(1, 3000)).map((e) => JSON.parse(e.data).text)).toEqual(["from elsewhere"]);
    await sse.close();
  });

  test.skipIf(!onPostgres)("lines written by another instance on the same PostgreSQL are found when it announces its commit", async () => {
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const sse = sseReader((await follow(`/api/v1/notes/${id}/lines`)).body!);
    // What another instance's append does: the chunk, and the announcement on commit.
    const other = new SQL({ url: h.deps.config.postgres!.url, max: 1 });
    await other.begin(async (tx) => {
      await tx`INSERT INTO note_chunks (note_id, text, at) VALUES (${id}, ${"from elsewhere\n"}, ${h.clock.now()})`;
      await tx`SELECT pg_notify(${CHANGES_CHANNEL}, ${"another-instance"})`;
    });
    await other.close();
    expect((await sse.take(1, 3000)).map((e) => JSON.parse(e.data).text)).toEqual(["from elsewhere"]);
    await sse.close();
  });

  test("closeAll (shutdown) ends every open stream", async () => {
    const { id } = (await (await append("f.log", "x")).json()) as { id: string };
    const streams = [sseReader((await follow(`/api/v1/notes/${id}/lines`)).body!), sseReader((await follow(`/api/v1/notes/by-filename/f.log/lines`)).body!)];
    expect(followers(h.deps).size).toBe(2);
    followers(h.deps).closeAll();
    for (const s of streams) await s.ended(2000);
    expect(followers(h.deps).size).toBe(0);
  });
});

describe("appends with Content-Type: text/plain", () => {
  const post = (path: string, body: string, type: string, headers: Record<string, string> = {}) =>
    h.request("POST", path, { token, body, headers: { "content-type": type, ...headers } });

  test("the body is the text: 201 on the first write, 200 after, stored as JSON text would be", async () => {
    const first = await post("/api/v1/notes/by-filename/plain.log/append", "deploy ok", "text/plain");
    expect(first.status).toBe(201);
    const { id } = await first.json();
    expect((await post("/api/v1/notes/by-filename/plain.log/append", "héllo\r\nwörld\u0007", "text/plain; charset=utf-8")).status).toBe(200);
    expect((await post(`/api/v1/notes/${id}/append`, "by id", "Text/Plain;Charset=UTF-8")).status).toBe(200);
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.plain_body).toBe("deploy ok\nhéllo\nwörld\nby id\n");
    expect(note.byte_size).toBe(Buffer.byteLength(note.plain_body));
  });

  test("a body that looks like JSON is still text; an Idempotency-Key works as with JSON", async () => {
    const headers = { "idempotency-key": "plain-1" };
    const a = await post("/api/v1/notes/by-filename/p.log/append", '{"text":"x"}', "text/plain", headers);
    const b = await post("/api/v1/notes/by-filename/p.log/append", '{"text":"x"}', "text/plain", headers);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotent-replay")).toBe("true");
    expect((await (await h.request("GET", "/api/v1/notes/by-filename/p.log", { token })).json()).plain_body).toBe('{"text":"x"}\n');
  });

  test("an empty or blank text is 422 naming text; another charset or type is 400", async () => {
    for (const body of ["", " \u0001 "]) {
      const res = await post("/api/v1/notes/by-filename/p.log/append", body, "text/plain");
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details[0].field).toBe("text");
    }
    for (const type of ["text/plain; charset=iso-8859-1", "text/html", "text/csv", "application/octet-stream", "text/plainish"]) {
      const res = await post("/api/v1/notes/by-filename/p.log/append", "x", type);
      expect({ type, status: res.status }).toEqual({ type, status: 400 });
      expect((await errorOf(res)).code).toBe("bad_request");
    }
    // Other API writes stay JSON only.
    const note = await post("/api/v1/notes", "title", "text/plain");
    expect(note.status).toBe(400);
  });
});
