import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { and, count, desc, eq, sql } from "drizzle-orm";
import { accounts, jobs as jobsTable, noteChunks, notes } from "../../src/db/tables";
import { runTask } from "../../src/schedule";
import { createSession } from "../../src/web/session";
import { errorOf, harness, type Harness } from "../helpers/harness";
import { dropSearchTriggers, rowChanges } from "../helpers/row-changes";

let h: Harness;
let acct: { accountId: string; workspaceId: string; email: string };
let token: string;
let sent: { to: string; subject: string; text: string }[];
beforeEach(async () => {
  h = await harness();
  sent = [];
  h.deps.mailer = { send: async (m) => void sent.push(m) };
  acct = await h.account("dev", "owner@example.com");
  token = await h.token(acct, ["read", "write"]);
});
afterEach(() => h.close());

const CAP = 3 * 1024 * 1024;
const DAY = 86_400_000;
const bytes = (s: string) => Buffer.byteLength(s);
const iso = (ms: number) => new Date(ms).toISOString();

const append = (filename: string, text: string) =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text } });
const patch = (id: string, note: Record<string, unknown>) => h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } });
const noteOf = async (id: string) => (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();

/** Grows a stream to exactly `size` bytes through the API: 100 KB lines, then one to top it up. */
async function fill(filename: string, size = CAP): Promise<string> {
  const block = "a".repeat(100 * 1024 - 1);
  let id = "";
  let total = 0;
  while (total + 100 * 1024 <= size) {
    const res = await append(filename, block);
    expect(res.status).toBeLessThan(300);
    id = (await res.json()).id;
    total += 100 * 1024;
  }
  if (total < size) {
    const res = await append(filename, "b".repeat(size - total - 1));
    expect(res.status).toBeLessThan(300);
    id = (await res.json()).id;
  }
  expect((await noteOf(id)).byte_size).toBe(size);
  return id;
}

/** What the stored chunks of the workspace hold, in bytes: the truth storage and byte_size must match. */
const chunkBytes = async (noteId?: string) => {
  const [r] = await h.deps.db
    .select({ b: sql<number>`coalesce(sum(octet_length(${noteChunks.text})), 0)` })
    .from(noteChunks)
    .innerJoin(notes, eq(notes.id, noteChunks.noteId))
    .where(and(eq(notes.workspaceId, acct.workspaceId), noteId === undefined ? undefined : eq(notes.id, noteId)));
  return Number(r!.b);
};
const storageUsed = async () => (await (await h.request("GET", "/api/v1/account", { token })).json()).usage.storage_bytes as number;
const chunkCount = async (noteId: string) => (await h.deps.db.select({ n: count() }).from(noteChunks).where(eq(noteChunks.noteId, noteId)))[0]!.n;

describe("PATCH retention and retention_days", () => {
  test("a stream shows retention reject, retention_days null and full false until set; both round-trip", async () => {
    const { id } = await (await append("r.log", "x")).json();
    expect(await noteOf(id)).toMatchObject({ retention: "reject", retention_days: null, full: false });
    const res = await patch(id, { retention: "drop_oldest", retention_days: 14 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ retention: "drop_oldest", retention_days: 14, full: false });
    const listed = (await (await h.request("GET", "/api/v1/notes", { token })).json())[0];
    expect(listed).toMatchObject({ retention: "drop_oldest", retention_days: 14, full: false });
    expect(await (await patch(id, { retention_days: null })).json()).toMatchObject({ retention: "drop_oldest", retention_days: null });
    expect(await (await patch(id, { retention: "reject" })).json()).toMatchObject({ retention: "reject", retention_days: null });
  });

  test("bad values are 422 naming the field, and change nothing", async () => {
    const { id } = await (await append("v.log", "x")).json();
    const cases: [Record<string, unknown>, string][] = [
      [{ retention: "keep_all" }, "note.retention"],
      [{ retention: null }, "note.retention"],
      [{ retention_days: 0 }, "note.retention_days"],
      [{ retention_days: -3 }, "note.retention_days"],
      [{ retention_days: 1.5 }, "note.retention_days"],
      [{ retention_days: 3651 }, "note.retention_days"],
    ];
    for (const [body, field] of cases) {
      const res = await patch(id, body);
      expect(res.status).toBe(422);
      const error = await errorOf(res);
      expect(error.code).toBe("validation_failed");
      expect(error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect(await noteOf(id)).toMatchObject({ retention: "reject", retention_days: null });
    expect((await patch(id, { retention_days: 3650 })).status).toBe(200);
  });

  test("an editable note has no retention: 422 not_a_stream", async () => {
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t" } } })).json();
    for (const body of [{ retention: "drop_oldest" }, { retention_days: 3 }]) {
      const res = await patch(id, body);
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details[0]).toMatchObject({ code: "not_a_stream" });
    }
  });
});

describe("drop_oldest", () => {
  test("a stream at its cap takes 1,000 more appends, keeps its newest lines byte-exact, and storage stays exact", async () => {
    const id = await fill("keep.log");
    expect((await patch(id, { retention: "drop_oldest" })).status).toBe(200);
    const sentLines: string[] = [];
    let appended = CAP;
    let dropped = 0;
    // One after another: each append drops whole stored chunks, oldest first. (The clock moves a
    // minute now and then, for the plan's 300 appends a minute.)
    for (let i = 0; i < 500; i++) {
      if (i % 250 === 0) h.clock.advance(60_000);
      const text = `one ${i} ✓ ${"s".repeat(2000)}`;
      const res = await append("keep.log", text);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.byte_size).toBeLessThanOrEqual(CAP);
      expect(body.bytes_remaining).toBe(CAP - body.byte_size);
      sentLines.push(text);
      appended += bytes(text) + 1;
      dropped += body.dropped_bytes;
    }
    // 250 at once, twice: they share writer batches, whose lines (5 MB, more than the cap) are not
    // stored yet when the stored chunks run out, so a batch drops its own oldest lines too.
    for (const burst of [0, 1]) {
      h.clock.advance(60_000);
      const batchesBefore = h.deps.writer.stats.batches;
      const texts = Array.from({ length: 250 }, (_, i) => `many ${burst}.${i} ${"p".repeat(20_000)}`);
      const answers = await Promise.all(texts.map((t) => append("keep.log", t)));
      expect(h.deps.writer.stats.batches - batchesBefore).toBeLessThan(3);
      for (const res of answers) {
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body.byte_size).toBeLessThanOrEqual(CAP);
        dropped += body.dropped_bytes;
      }
      sentLines.push(...texts);
      appended += texts.reduce((n, t) => n + bytes(t) + 1, 0);
    }

    const note = await noteOf(id);
    const body = note.plain_body as string;
    expect(note.byte_size).toBe(bytes(body));
    expect(note.byte_size).toBeLessThanOrEqual(CAP);
    expect(note.byte_size).toBe(appended - dropped);
    expect(note.full).toBe(false);
    const kept = body.slice(0, -1).split("\n");
    // The newest lines, whole, in order: a suffix of what was sent.
    expect(kept.length).toBeGreaterThan(100);
    expect(kept).toEqual(sentLines.slice(-kept.length));
    expect(await chunkBytes(id)).toBe(note.byte_size);
    expect(await storageUsed()).toBe(await chunkBytes());
  });

  test("appends that fit drop nothing (dropped_bytes 0), and the first that does not drops only the oldest chunks it must", async () => {
    const { id } = await (await append("d.log", "first line")).json();
    await patch(id, { retention: "drop_oldest" });
    const ok = await (await append("d.log", "second line")).json();
    expect(ok.dropped_bytes).toBe(0);
    // 11 + 12 bytes so far; grow it to the cap exactly.
    const rest = await append("d.log", "z".repeat(CAP - 23 - 1));
    expect((await rest.json()).dropped_bytes).toBe(0);
    const res = await append("d.log", "third");
    const r = await res.json();
    expect(r.dropped_bytes).toBe(11); // "first line\n": one chunk is enough for six bytes
    expect(r.byte_size).toBe(CAP - 11 + 6);
    expect((await noteOf(id)).plain_body.startsWith("second line\nzzz")).toBe(true);
    expect(await storageUsed()).toBe(await chunkBytes());
  });

  test("a single line larger than the cap is still refused (cap_exceeded note_size), and nothing is dropped", async () => {
    const { id } = await (await append("big.log", "keep me")).json();
    await patch(id, { retention: "drop_oldest" });
    const res = await append("big.log", "q".repeat(CAP));
    expect(res.status).toBe(403);
    const error = await errorOf(res);
    expect(error.code).toBe("cap_exceeded");
    expect(error.details.cap).toBe("note_size");
    const note = await noteOf(id);
    expect(note).toMatchObject({ plain_body: "keep me\n", full: false });
    await h.settle();
    await h.jobs.drain();
    expect(sent).toHaveLength(0);
  });

  test("the append that drops still enqueues its outbound webhook", async () => {
    h.deps.resolve = async () => [];
    const id = await fill("hook.log");
    await patch(id, { retention: "drop_oldest", webhook_url: "https://hooks.example.com/in" });
    const jobs = async () => (await h.deps.db.select({ n: count() }).from(jobsTable).where(eq(jobsTable.queue, "webhook")))[0]!.n;
    const before = await jobs();
    const res = await append("hook.log", "over the cap");
    expect((await res.json()).dropped_bytes).toBeGreaterThan(0);
    expect(await jobs()).toBe(before + 1);
    const [job] = await h.deps.db.select({ payload: jobsTable.payload }).from(jobsTable).where(eq(jobsTable.queue, "webhook")).orderBy(desc(jobsTable.id)).limit(1);
    expect(JSON.parse(job!.payload).text).toBe("over the cap\n");
  });
});

describe("retention_days", () => {
  test("the periodic task removes lines older than N days, oldest first, with exact byte_size and storage", async () => {
    const t0 = h.clock.now();
    const { id } = await (await append("aged.log", "day 0")).json();
    h.clock.advance(DAY);
    await append("aged.log", "day 1");
    h.clock.advance(DAY);
    await append("aged.log", "day 2");
    expect((await patch(id, { retention_days: 2 })).status).toBe(200);
    // Exactly two days old is not older than two days.
    await runTask(h.deps, "retention");
    expect((await noteOf(id)).plain_body).toBe("day 0\nday 1\nday 2\n");
    h.clock.advance(60_000);
    await runTask(h.deps, "retention");
    let note = await noteOf(id);
    expect(note.plain_body).toBe("day 1\nday 2\n");
    expect(note.byte_size).toBe(12);
    expect(await storageUsed()).toBe(12);
    h.clock.advance(DAY);
    await runTask(h.deps, "retention");
    note = await noteOf(id);
    expect(note.plain_body).toBe("day 2\n");
    expect(await storageUsed()).toBe(await chunkBytes());
    // Turned off, nothing more goes.
    await patch(id, { retention_days: null });
    h.clock.advance(30 * DAY);
    await runTask(h.deps, "retention");
    expect((await noteOf(id)).plain_body).toBe("day 2\n");
    expect(t0).toBeLessThan(h.clock.now());
  });

  test("its cost is what it removes: a stream with 200 chunks, 50 of them expired, changes 50 rows and two counters", async () => {
    const { id } = await (await append("cost.log", "old 0")).json();
    for (let i = 1; i < 50; i++) await append("cost.log", `old ${i}`);
    h.clock.advance(10 * DAY);
    for (let i = 0; i < 150; i++) await append("cost.log", `new ${i}`);
    await patch(id, { retention_days: 5 });
    expect(await chunkCount(id)).toBe(200);
    // The stream's own rows: the search index's triggers are set aside, as each removed chunk also
    // removes its index rows (test/integration/search.test.ts has those).
    await dropSearchTriggers(h.deps.store);
    const totalChanges = await rowChanges(h.deps.store);
    const before = await totalChanges();
    await runTask(h.deps, "retention");
    // 50 chunks, the note and the workspace (and the scheduler's own nothing).
    expect((await totalChanges()) - before).toBe(52);
    expect(await chunkCount(id)).toBe(150);
    const note = await noteOf(id);
    expect(note.plain_body.startsWith("new 0\n")).toBe(true);
    expect(note.byte_size).toBe(await chunkBytes(id));
    expect(await storageUsed()).toBe(await chunkBytes());
  });

  test("streams without retention_days, and other workspaces' streams, are left alone", async () => {
    token = await h.token(acct, ["read", "write"], { expiresInDays: 365 });
    const { id } = await (await append("forever.log", "ancient")).json();
    const other = await h.token(await h.account("dev"), ["read", "write"], { expiresInDays: 365 });
    const { id: theirs } = await (await h.request("POST", "/api/v1/notes/by-filename/x.log/append", { token: other, body: { text: "theirs" } })).json();
    await h.request("PATCH", `/api/v1/notes/${theirs}`, { token: other, body: { note: { retention_days: 1 } } });
    h.clock.advance(300 * DAY);
    await runTask(h.deps, "retention");
    expect((await noteOf(id)).plain_body).toBe("ancient\n");
    expect((await (await h.request("GET", `/api/v1/notes/${theirs}`, { token: other })).json()).plain_body).toBe("");
  });
});

describe("a full stream under reject", () => {
  const FULL_TEXT = (since: number) => `full.log is full: appends are being refused since ${iso(since)}; set retention or free space`;

  test("the first refusal marks it full and mails once per spell; the refused append itself writes nothing", async () => {
    const id = await fill("full.log");
    await patch(id, { alert_email: "ops@example.com" });
    const chunks = await chunkCount(id);
    const storage = await storageUsed();
    const refusedAt = h.clock.now();
    const res = await append("full.log", "one too many");
    expect(res.status).toBe(403);
    expect((await errorOf(res)).details.cap).toBe("note_size");
    await h.settle();
    await h.jobs.drain();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to).toBe("ops@example.com");
    expect(sent[0]!.subject).toBe("[notestream] full.log is full");
    expect(sent[0]!.text).toContain(FULL_TEXT(refusedAt));
    expect(await noteOf(id)).toMatchObject({ full: true, byte_size: CAP });
    expect(await chunkCount(id)).toBe(chunks);
    expect(await storageUsed()).toBe(storage);

    // Later refusals in the same spell, one by one or together, send nothing more.
    h.clock.advance(60_000);
    await append("full.log", "still too many");
    await Promise.all(Array.from({ length: 20 }, (_, i) => append("full.log", `burst ${i}`)));
    await h.settle();
    await h.jobs.drain();
    expect(sent).toHaveLength(1);

    // Changing retention ends the spell; the next refusal starts a new one, and mails again.
    expect(await (await patch(id, { retention_days: 365 })).json()).toMatchObject({ full: false });
    h.clock.advance(60_000);
    const again = h.clock.now();
    expect((await append("full.log", "and again")).status).toBe(403);
    await h.settle();
    await h.jobs.drain();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.text).toContain(FULL_TEXT(again));
    expect((await noteOf(id)).full).toBe(true);
  });

  test("without an alert address the owner hears; an append that fits ends the spell", async () => {
    const id = await fill("full.log", CAP - 10);
    expect((await append("full.log", "this line is longer than ten bytes")).status).toBe(403);
    await h.settle();
    await h.jobs.drain();
    expect(sent.map((m) => m.to)).toEqual(["owner@example.com"]);
    expect((await noteOf(id)).full).toBe(true);
    expect((await append("full.log", "short")).status).toBe(200);
    expect((await noteOf(id)).full).toBe(false);
  });

  test("inside quiet time the full mail waits for its end, and goes once if still full; a paused stream sends none", async () => {
    const id = await fill("full.log");
    const quietEnd = h.clock.now() + 3_600_000;
    expect((await patch(id, { quiet_until: iso(quietEnd) })).status).toBe(200);
    expect((await append("full.log", "refused")).status).toBe(403);
    await h.settle();
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent).toHaveLength(0);
    h.clock.t = quietEnd;
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent.map((m) => m.subject)).toEqual(["[notestream] full.log is full"]);
    h.clock.advance(60_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent).toHaveLength(1);

    // A new spell on a paused stream: no mail, then or later.
    await patch(id, { retention_days: 365 });
    expect((await h.request("POST", `/api/v1/notes/${id}/pause`, { token })).status).toBe(200);
    expect((await append("full.log", "refused again")).status).toBe(403);
    await h.settle();
    h.clock.advance(3_600_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent).toHaveLength(1);
    expect((await noteOf(id)).full).toBe(true);
  });

  test("the note shrinking (retention_days) ends the spell", async () => {
    const id = await fill("full.log");
    await patch(id, { retention_days: 1 });
    expect((await append("full.log", "refused")).status).toBe(403);
    await h.settle();
    expect((await noteOf(id)).full).toBe(true);
    h.clock.advance(2 * DAY);
    await runTask(h.deps, "retention");
    expect(await noteOf(id)).toMatchObject({ full: false, byte_size: 0 });
    expect(await storageUsed()).toBe(0);
  });

  test("a drop_oldest stream never becomes full", async () => {
    const id = await fill("full.log");
    await patch(id, { retention: "drop_oldest" });
    expect((await append("full.log", "fits after a drop")).status).toBe(200);
    await h.settle();
    await h.jobs.drain();
    expect((await noteOf(id)).full).toBe(false);
    expect(sent).toHaveLength(0);
  });
});

describe("the stream's pages", () => {
  async function session() {
    const [account] = await h.deps.db.select().from(accounts).where(eq(accounts.id, acct.accountId));
    const { secret } = await createSession(h.deps, account!);
    return `ns_session=${secret}`;
  }
  const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

  test("a full stream is badged full on its page; the settings page sets retention with the same rules", async () => {
    const cookie = await session();
    const id = await fill("full.log");
    expect((await append("full.log", "refused")).status).toBe(403);
    await h.settle();
    const page = await (await h.request("GET", `/notes/${id}`, { headers: { cookie } })).text();
    expect(page.includes('<span class="badge full">full</span>')).toBe(true);

    const settings = await (await h.request("GET", `/notes/${id}/settings`, { headers: { cookie } })).text();
    expect(settings.includes(`action="/notes/${id}/retention"`)).toBe(true);
    expect(settings.includes('<span class="badge full">full</span>')).toBe(true);
    const post = (fields: Record<string, string>) =>
      h.request("POST", `/notes/${id}/retention`, {
        headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: "http://notestream.test" },
        body: new URLSearchParams({ _csrf: csrfOf(settings), ...fields }).toString(),
      });
    const saved = await post({ retention: "drop_oldest", retention_days: "30" });
    expect(saved.status).toBe(303);
    expect(await noteOf(id)).toMatchObject({ retention: "drop_oldest", retention_days: 30, full: false });
    const bad = await post({ retention: "drop_oldest", retention_days: "0" });
    // Refused in place: the form again, the message beside the field.
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("Enter a whole number of days from 1 to 3650");
    expect((await noteOf(id)).retention_days).toBe(30);
    expect((await post({ retention: "reject", retention_days: "" })).status).toBe(303);
    expect(await noteOf(id)).toMatchObject({ retention: "reject", retention_days: null });
  });
});
