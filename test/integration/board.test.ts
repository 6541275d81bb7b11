/**
 * The notes list as a status board: each stream's dead-man, fill, webhook and inbox state, the
 * "needs attention" filter (its SQL and the rule the rows are drawn with must agree), the counts,
 * and the JSON the page's script polls.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { notes } from "../../src/db/tables";
import { findAccountByEmail } from "../../src/modules/accounts/service";
import { streamHealth, webhookHealth } from "../../src/modules/streams/board";
import { runTask } from "../../src/schedule";
import { createSession, SESSION_COOKIE } from "../../src/web/session";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(() => h.close());

const MB = 1024 * 1024;
const CAP = 3 * MB;

async function setUp() {
  const a = await h.account("dev");
  const token = await h.token(a, ["read", "write"]);
  const { secret } = await createSession(h.deps, (await findAccountByEmail(h.deps, a.email))!);
  const cookie = `${SESSION_COOKIE}=${secret}`;
  const append = (filename: string, text: string) => h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: { text } });
  const stream = async (filename: string, text = "a line") => (await (await append(filename, text)).json()).id as string;
  const arm = (id: string) => h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: 3600 } } });
  const setNote = async (id: string, changes: Partial<typeof notes.$inferInsert>) => {
    await h.deps.db.update(notes).set(changes).where(eq(notes.id, id));
  };
  const get = async (path: string) => {
    const res = await h.request("GET", path, { headers: { cookie } });
    return { status: res.status, text: await res.text() };
  };
  return { a, token, cookie, append, stream, arm, setNote, get };
}

/** One note of every state the board tells apart; returns their ids by name. */
async function everyState(u: Awaited<ReturnType<typeof setUp>>) {
  const ids: Record<string, string> = {};
  ids.late = await u.stream("late.log");
  await u.arm(ids.late);
  h.clock.advance(2 * 3600_000);
  await runTask(h.deps, "deadman");
  ids.fresh = await u.stream("fresh.log");
  await u.arm(ids.fresh);
  ids.quiet = await u.stream("quiet.log");
  ids.full = await u.stream("full.log", "x".repeat(MB - 1));
  for (let i = 0; i < 2; i++) expect((await u.append("full.log", "x".repeat(MB - 1))).status).toBe(200);
  // The refusal starts the full spell (full_since), in a write of its own.
  expect((await u.append("full.log", "one more")).status).toBe(403);
  await h.settle();
  ids.atCap = await u.stream("at-cap.log");
  await u.setNote(ids.atCap, { byteSize: CAP });
  ids.dropping = await u.stream("dropping.log");
  await u.setNote(ids.dropping, { byteSize: CAP, retention: "drop_oldest" });
  ids.failing = await u.stream("failing.log");
  await u.setNote(ids.failing, { deadmanStatus: "failing", expectedIntervalSeconds: 3600 });
  ids.hookFailing = await u.stream("hook-failing.log");
  await u.setNote(ids.hookFailing, { webhookUrl: "https://example.com/h", webhookStatus: "enabled", webhookFailures: 2 });
  ids.hookDisabled = await u.stream("hook-disabled.log");
  await u.setNote(ids.hookDisabled, { webhookUrl: "https://example.com/h", webhookStatus: "disabled", webhookFailures: 10 });
  ids.hookOk = await u.stream("hook-ok.log");
  await u.setNote(ids.hookOk, { webhookUrl: "https://example.com/h", webhookStatus: "enabled" });
  expect((await h.request("POST", `/api/v1/notes/${ids.hookOk}/inbox`, { token: u.token })).status).toBeLessThan(300);
  ids.plain = (await (await h.request("POST", "/api/v1/notes", { token: u.token, body: { note: { title: "Runbook", plain_body: "steps" } } })).json()).id;
  ids.rich = (await (await h.request("POST", "/api/v1/notes", { token: u.token, body: { note: { title: "Design", plain_body: "" } } })).json()).id;
  await u.setNote(ids.rich!, { format: "rich" });
  return ids;
}

/** The rows of a list page, by note id: each `<li data-board-row>`'s markup. */
function rowsOf(page: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of page.matchAll(/<li class="brow [^"]*" data-board-row="([^"]+)"[^>]*>([\s\S]*?)<\/li>/g)) rows.set(m[1]!, m[2]!);
  return rows;
}

const countOf = (page: string, filter: string) => Number(new RegExp(`data-board-count="${filter}">(\\d+)<`).exec(page)?.[1]);

describe("the status board", () => {
  test("each stream's row says its dead-man, webhook and inbox state, and its fill against the cap", async () => {
    const u = await setUp();
    const ids = await everyState(u);
    const page = await u.get("/notes");
    expect(page.status).toBe(200);
    const rows = rowsOf(page.text);
    const health = (id: string) => /data-health="(\w+)"/.exec(rows.get(id)!)?.[1];
    const webhook = (id: string) => /data-webhook="(\w+)"/.exec(rows.get(id)!)?.[1];
    expect(health(ids.fresh!)).toBe("ok");
    expect(health(ids.quiet!)).toBe("off");
    expect(health(ids.late!)).toBe("late");
    expect(health(ids.full!)).toBe("full");
    expect(health(ids.atCap!)).toBe("full");
    expect(health(ids.dropping!)).toBe("off");
    expect(health(ids.failing!)).toBe("failing");
    expect(webhook(ids.fresh!)).toBe("none");
    expect(webhook(ids.hookOk!)).toBe("ok");
    expect(webhook(ids.hookFailing!)).toBe("failing");
    expect(webhook(ids.hookDisabled!)).toBe("disabled");
    expect(rows.get(ids.hookOk!)).toContain('data-inbox="on"');
    expect(rows.get(ids.fresh!)).toContain('data-inbox="off"');
    expect(rows.get(ids.full!)).toContain("3 MB of 3 MB");
    expect(rows.get(ids.full!)).toMatch(/<meter [^>]*max="3145728"[^>]*value="3145728"/);
    expect(rows.get(ids.fresh!)).toContain("7 B of 3 MB");
    // Editable notes keep a simpler row: last edit and size.
    expect(rows.get(ids.plain!)).toContain("Last edit");
    expect(rows.get(ids.plain!)).not.toContain("data-health");
    expect(rows.get(ids.rich!)).toContain("rich note");
    expect(page.text).toContain("<h1>Notes</h1>");
  });

  test("Needs attention lists late, failing and full streams and failing or disabled webhooks, as the rows are drawn", async () => {
    const u = await setUp();
    const ids = await everyState(u);
    const page = await u.get("/notes?show=attention");
    const shown = new Set(rowsOf(page.text).keys());
    const expected = ["late", "full", "atCap", "failing", "hookFailing", "hookDisabled"].map((k) => ids[k]!);
    expect([...shown].sort()).toEqual([...expected].sort());
    // The filter's SQL and the health each row is drawn with agree on every note.
    const needsAttention = (row: typeof notes.$inferSelect) =>
      row.kind === "stream" && (["late", "failing", "full"].includes(streamHealth(row, CAP)) || ["failing", "disabled"].includes(webhookHealth(row)));
    for (const row of await h.deps.db.select().from(notes).where(eq(notes.workspaceId, u.a.workspaceId))) {
      expect([row.filename ?? row.title, shown.has(row.id)]).toEqual([row.filename ?? row.title, needsAttention(row)]);
    }
    expect(page.text).toMatch(/<a href="\/notes\?show=attention" class="on" aria-current="page">Needs attention/);
    expect(countOf(page.text, "all")).toBe(12);
    expect(countOf(page.text, "attention")).toBe(6);
    expect(countOf(page.text, "streams")).toBe(10);
    expect(countOf(page.text, "plain")).toBe(1);
    expect(countOf(page.text, "rich")).toBe(1);
  });

  test("filters by kind, keep the folder in their links, and an unknown filter shows everything", async () => {
    const u = await setUp();
    const ids = await everyState(u);
    expect([...rowsOf((await u.get("/notes?show=rich")).text).keys()]).toEqual([ids.rich!]);
    expect([...rowsOf((await u.get("/notes?show=plain")).text).keys()]).toEqual([ids.plain!]);
    expect(rowsOf((await u.get("/notes?show=streams")).text).size).toBe(10);
    expect(rowsOf((await u.get("/notes?show=bogus")).text).size).toBe(12);
    const folder = (await (await h.request("POST", "/api/v1/folders", { token: u.token, body: { folder: { name: "Ops" } } })).json()).id;
    await h.request("PATCH", `/api/v1/notes/${ids.late}`, { token: u.token, body: { note: { folder_id: folder } } });
    const inFolder = await u.get(`/notes?folder=${folder}&show=attention`);
    expect([...rowsOf(inFolder.text).keys()]).toEqual([ids.late!]);
    expect(inFolder.text).toContain("<h1>Ops</h1>");
    expect(inFolder.text).toContain(`href="/notes?folder=${folder}&amp;show=streams"`);
    expect(countOf(inFolder.text, "all")).toBe(1);
  });

  test("the title search takes % and _ as text", async () => {
    const u = await setUp();
    await h.request("POST", "/api/v1/notes", { token: u.token, body: { note: { title: "100% uptime" } } });
    await h.request("POST", "/api/v1/notes", { token: u.token, body: { note: { title: "100 days" } } });
    const found = await u.get("/notes?q=100%25");
    expect(rowsOf(found.text).size).toBe(1);
    expect(found.text).toContain("100% uptime");
  });

  test("board.json answers the view's rows and counts; a row's signature changes when the stream is written", async () => {
    const u = await setUp();
    const id = await u.stream("fresh.log");
    await u.stream("other.log");
    const first = await u.get("/notes/board.json?show=streams");
    expect(first.status).toBe(200);
    const before = JSON.parse(first.text);
    expect(before.counts).toEqual({ all: 2, attention: 0, streams: 2, plain: 0, rich: 0 });
    const row = before.rows.find((r: { id: string }) => r.id === id);
    expect(row.html).toContain(`data-sig="${row.sig}"`);
    h.clock.advance(60_000);
    expect((await u.append("fresh.log", "another line")).status).toBe(200);
    const after = JSON.parse((await u.get("/notes/board.json?show=streams")).text);
    const changed = after.rows.find((r: { id: string }) => r.id === id);
    expect(changed.sig).not.toBe(row.sig);
    expect(changed.html).toContain("20 B of 3 MB");
    expect(changed.html).toContain(`datetime="${new Date(h.clock.now()).toISOString()}"`);
    const other = after.rows.find((r: { id: string }) => r.id !== id);
    expect(other.sig).toBe(before.rows.find((r: { id: string }) => r.id !== id).sig);
  });

  test("board.json without a session is a bare 401, not the sign-in page", async () => {
    const res = await h.request("GET", "/notes/board.json");
    expect(res.status).toBe(401);
  });
});
