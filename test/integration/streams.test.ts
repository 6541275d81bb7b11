import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { count, desc, eq, sql } from "drizzle-orm";
import { noteChunks, notes } from "../../src/db/tables";
import { errorOf, harness, type Harness } from "../helpers/harness";
import { dropSearchTriggers, rowChanges, settleSearchIndex } from "../helpers/row-changes";

let h: Harness;
let token: string;
beforeEach(async () => {
  h = await harness();
  token = await h.token(await h.account("dev"), ["read", "write"]);
});
afterEach(() => h.close());

const append = (filename: string, text: unknown, t = token) =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token: t, body: { text } });

describe("append by filename", () => {
  test("first write creates the stream (201), later writes append (200)", async () => {
    const first = await append("deploys.log", "deploy 1");
    expect(first.status).toBe(201);
    const a = await first.json();
    expect(a).toMatchObject({ filename: "deploys.log", created: true, byte_size: 9, storage_used: 9, dropped_bytes: 0 });
    expect(a.id).toStartWith("note_");
    expect(a.bytes_remaining).toBe(3 * 1024 * 1024 - 9);
    expect(a.storage_cap).toBe(15 * 1024 ** 3);
    expect(a.updated_at).toBe(new Date(h.clock.now()).toISOString());

    const second = await append("deploys.log", "deploy 2\n");
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ id: a.id, created: false, byte_size: 18, storage_used: 18 });

    const read = await h.request("GET", "/api/v1/notes/by-filename/deploys.log", { token });
    expect(read.status).toBe(200);
    const note = await read.json();
    expect(note).toMatchObject({ id: a.id, kind: "stream", format: "plain", title: "deploys.log", byte_size: 18 });
    expect(note.plain_body).toBe("deploy 1\ndeploy 2\n");
  });

  test("text is normalised: CRLF to LF, control characters removed, tab kept, final LF added, no timestamp", async () => {
    await append("n.log", "a\r\nb\u0000c\td\u0007\u001b[31m");
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/n.log", { token })).json();
    expect(note.plain_body).toBe("a\nbc\td[31m\n");
  });

  test("reading returns the exact concatenation of unicode appends", async () => {
    const lines = ["héllo ✓", "日本語のテキスト", "emoji 🎉 ok", "tab\tseparated"];
    for (const l of lines) await append("u.log", l);
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/u.log", { token })).json();
    expect(note.plain_body).toBe(lines.map((l) => l + "\n").join(""));
    expect(note.byte_size).toBe(Buffer.byteLength(note.plain_body));
  });

  test("blank text, a missing text and a non-string text are 422 validation_failed", async () => {
    for (const [body, code] of [
      [{ text: "" }, "blank"],
      [{ text: "\u0000\r" }, "blank"],
      [{}, "required"],
      [{ text: 42 }, "invalid_type"],
    ] as const) {
      const res = await h.request("POST", "/api/v1/notes/by-filename/x.log/append", { token, body });
      expect(res.status).toBe(422);
      const err = await errorOf(res);
      expect(err.code).toBe("validation_failed");
      expect(err.details[0]).toMatchObject({ field: "text", code });
    }
    // Nothing was created by the refused writes.
    expect((await h.request("GET", "/api/v1/notes/by-filename/x.log", { token })).status).toBe(404);
  });

  test("a body that is not JSON is 400 bad_request, never a 500", async () => {
    const bad = await h.request("POST", "/api/v1/notes/by-filename/x.log/append", { token, body: '{"text":' });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).code).toBe("bad_request");
    const wrongType = await h.request("POST", "/api/v1/notes/by-filename/x.log/append", {
      token,
      body: "text=hi",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(wrongType.status).toBe(400);
    expect((await errorOf(wrongType)).message).toContain("application/json");
  });
});

describe("filename rules", () => {
  const refused: [string, string][] = [
    ["201 bytes", "a".repeat(201)],
    ["201 bytes of multi-byte characters", "é".repeat(100) + "a"],
    ["a slash", "logs/deploy.log"],
    ["a backslash", "logs\\deploy.log"],
    ["a zero-width space", "deploy\u200B.log"],
    ["a bidi override", "deploy\u202Egol.txt"],
    ["a NUL", "deploy\u0000.log"],
    ["a newline", "deploy\n.log"],
    ["a trailing space", "deploy.log "],
    ["a leading space", " deploy.log"],
    ["a trailing no-break space", "deploy.log\u00A0"],
    ["a line separator", "deploy\u2028.log"],
  ];
  for (const [what, name] of refused) {
    test(`a filename with ${what} is 422 and creates nothing`, async () => {
      const res = await append(name, "x");
      expect(res.status).toBe(422);
      const err = await errorOf(res);
      expect(err.code).toBe("validation_failed");
      expect(err.details[0].field).toBe("filename");
      const list = await h.request("GET", "/api/v1/notes", { token });
      expect(list.headers.get("x-total-count")).toBe("0");
    });
  }

  test("a filename of exactly 200 bytes, with spaces inside and unicode, is accepted", async () => {
    for (const name of ["a".repeat(200), "é".repeat(100), "daily summary 2026-11-22.txt", "🚀 deploys"]) {
      const res = await append(name, "x");
      expect(res.status).toBe(201);
      expect((await res.json()).filename).toBe(name);
    }
  });

  test("filenames are case-sensitive", async () => {
    expect((await append("Deploys", "x")).status).toBe(201);
    expect((await append("deploys", "x")).status).toBe(201);
  });
});

describe("append by id", () => {
  test("appends to the stream and answers 200", async () => {
    const { id } = await (await append("s.log", "one")).json();
    const res = await h.request("POST", `/api/v1/notes/${id}/append`, { token, body: { text: "two" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, filename: "s.log", created: false, byte_size: 8 });
  });

  test("an unknown id is 404 not_found", async () => {
    const res = await h.request("POST", "/api/v1/notes/note_missing/append", { token, body: { text: "x" } });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("not_found");
  });

  test("appending to an editable note is refused with 422", async () => {
    const note = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t", plain_body: "b" } } })).json();
    const res = await h.request("POST", `/api/v1/notes/${note.id}/append`, { token, body: { text: "x" } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0].code).toBe("not_a_stream");
  });

  test("appending to a rich-text note is 423 note_locked", async () => {
    const { id } = await (await append("r.log", "x")).json();
    await h.deps.db.update(notes).set({ format: "rich" }).where(eq(notes.id, id));
    const res = await h.request("POST", `/api/v1/notes/${id}/append`, { token, body: { text: "x" } });
    expect(res.status).toBe(423);
    expect((await errorOf(res)).code).toBe("note_locked");
  });
});

/**
 * Rows one request changes (SQLite's change counter; rowChanges has PostgreSQL's). The search
 * index is merged first: it merges its segments every few commits, and that work would land on
 * whichever write is next.
 */
async function changesOf(send: () => Promise<Response>): Promise<number> {
  await settleSearchIndex(h.deps.store);
  const total = await rowChanges(h.deps.store);
  const before = await total();
  expect((await send()).status).toBeLessThan(300);
  return (await total()) - before;
}

const chunkStats = async (noteId: string) => {
  const [row] = await h.deps.db
    .select({ n: count(), bytes: sql<number>`sum(length(${noteChunks.text}))`.mapWith(Number) })
    .from(noteChunks)
    .where(eq(noteChunks.noteId, noteId));
  return row!;
};

describe("append cost does not grow with the note", () => {
  test("appending to a 3 MB stream writes one chunk and does not rewrite the note", async () => {
    const { id } = await (await append("big.log", "seed")).json();
    // Grow the stream to ~3 MB through the API in 100 KB appends.
    const block = "x".repeat(100 * 1024 - 1);
    for (let i = 0; i < 30; i++) expect((await append("big.log", block)).status).toBe(200);
    const before = await chunkStats(id);
    expect(before.bytes).toBeGreaterThan(3_000_000);

    // SQLite's change counter: an append to the 3 MB stream touches as many rows as one to a
    // one-line stream (chunk, note, workspace, and the search index's rows for the new chunk).
    expect((await append("small.log", "seed")).status).toBe(201);
    const small = await changesOf(() => append("small.log", "one more line"));
    expect(await changesOf(() => append("big.log", "one more line"))).toBe(small);

    const after = await chunkStats(id);
    expect(after.n).toBe(before.n + 1);
    // The new line is stored alone, not as a rewritten body.
    const [last] = await h.deps.db
      .select({ text: noteChunks.text })
      .from(noteChunks)
      .where(eq(noteChunks.noteId, id))
      .orderBy(desc(noteChunks.seq))
      .limit(1);
    expect(last!.text).toBe("one more line\n");
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.plain_body.endsWith(block + "\none more line\n")).toBe(true);
    expect(note.byte_size).toBe(Buffer.byteLength(note.plain_body));
  });
});

describe("a full drop_oldest stream", () => {
  test("an append changes the chunks it drops and the same three rows, however large the stream", async () => {
    const { id } = await (await append("big.log", "seed")).json();
    const block = "x".repeat(100 * 1024 - 1);
    for (let i = 0; i < 30; i++) expect((await append("big.log", block)).status).toBe(200);
    const cap = 3 * 1024 * 1024;
    const have = 5 + 30 * 100 * 1024;
    expect((await append("big.log", "y".repeat(cap - have - 1))).status).toBe(200);
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { retention: "drop_oldest" } } })).status).toBe(200);
    // The rows of the stream itself: the search index's triggers are set aside, as what it writes
    // for a dropped chunk grows with that chunk's words (test/integration/search.test.ts has it).
    await dropSearchTriggers(h.deps.store);
    const changes = await rowChanges(h.deps.store);
    // "seed\n" (5 bytes) is the oldest chunk and enough for a 4-byte line: one row goes.
    let before = await changes();
    let res = await (await append("big.log", "one")).json();
    expect(res).toMatchObject({ dropped_bytes: 5, byte_size: cap - 1 });
    expect((await changes()) - before).toBe(4);
    // The next needs more than the byte left: a whole 100 KB chunk goes, and nothing else.
    before = await changes();
    res = await (await append("big.log", "two")).json();
    expect(res).toMatchObject({ dropped_bytes: 100 * 1024, byte_size: cap - 1 - 100 * 1024 + 4 });
    expect((await changes()) - before).toBe(4);
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.byte_size).toBe(Buffer.byteLength(note.plain_body));
    expect(note.plain_body.endsWith("one\ntwo\n")).toBe(true);
  });
});

describe("concurrent appends", () => {
  test("share transactions yet each is answered and stored once, in order per request", async () => {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => append("c.log", `line ${i}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/c.log", { token })).json();
    const lines = note.plain_body.trimEnd().split("\n");
    expect(lines).toHaveLength(100);
    expect(new Set(lines).size).toBe(100);
    const account = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(account.usage.storage_bytes).toBe(note.byte_size);
  });
});

describe("a batch of appends to one stream", () => {
  test("is stored as one chunk row, each line once and whole; a write in the middle sees the lines before it", async () => {
    const { id } = await (await append("b.log", "first")).json();
    const rows = async () => (await chunkStats(id)).n;
    expect(await rows()).toBe(1);
    const batchesBefore = h.deps.writer.stats.batches;
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => append("b.log", `line ${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    const batches = h.deps.writer.stats.batches - batchesBefore;
    // One row per batch the writer made, not one per append.
    expect(await rows()).toBe(1 + batches);
    expect(batches).toBeLessThan(30);
    const body = (await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).plain_body as string;
    expect(body.split("\n").filter(Boolean).sort()).toEqual(["first", ...Array.from({ length: 30 }, (_, i) => `line ${i}`)].sort());

    // A rename queued between appends: it runs after the earlier lines are written, and every line lands.
    const mixed = await Promise.all([
      append("b.log", "before rename"),
      h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "renamed" } } }),
      append("b.log", "after rename"),
    ]);
    expect(mixed.map((r) => r.status)).toEqual([200, 200, 200]);
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.title).toBe("renamed");
    expect(note.plain_body.endsWith("before rename\nafter rename\n")).toBe(true);
    expect(note.byte_size).toBe(Buffer.byteLength(note.plain_body));
  });
});

// That both ways to the append answer alike is append-parity.test.ts; these are the fast path's own answers.
describe("the append fast path", () => {
  test("valid JSON sent as another type than JSON or text/plain is refused (400), as on every other route", async () => {
    const res = await h.request("POST", "/api/v1/notes/by-filename/x.log/append", {
      token,
      body: '{"text":"hi"}',
      headers: { "content-type": "text/x-json" },
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("Content-Type: application/json");
  });

  test("an append by id with a broken path parameter is 422 naming it", async () => {
    const res = await h.request("POST", "/api/v1/notes/%E0%A4%A/append", { token, body: { text: "x" } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "id", code: "invalid" });
  });

  test("appends carry the rate-limit headers and a request id", async () => {
    const res = await h.request("POST", "/api/v1/notes/by-filename/x.log/append", { token, body: { text: "x" } });
    expect(res.headers.get("x-ratelimit-bucket")).toBe("appends");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("content-type")).toContain("application/json");
  });
});
