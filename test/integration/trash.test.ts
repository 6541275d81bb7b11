/**
 * The trash: DELETE moves a note there, GET /trash lists it, POST /notes/{id}/restore brings it
 * back (within the caps), and 30 days after trashing a periodic task purges it and frees its
 * storage. While it is in the trash the note is invisible to every reader and its inbox, pinned
 * tokens, webhook and dead-man's switch are silent; after a restore they all work again.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { count, eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { buildHandler } from "../../src/app";
import { accounts, inboxDeliveries, noteChunks, notes, webhookAttempts, workspaces } from "../../src/db/tables";
import { MB } from "../../src/limits/plans";
import type { MailMessage } from "../../src/mail/mailer";
import { startTrial, subscribe } from "../../src/modules/accounts/lifecycle";
import { createSession } from "../../src/web/session";
import { runTask } from "../../src/schedule";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";
import { receiver } from "../helpers/receiver";
import { tool, toolError } from "../helpers/mcp";

const DAY = 24 * 3600 * 1000;
const KB = 1024;
const TEXT = { "content-type": "text/plain" };

let h: Harness;
let sent: MailMessage[];
let hook: ReturnType<typeof receiver> | undefined;
let server: ReturnType<typeof Bun.serve> | undefined;
let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close().catch(() => {});
  server?.stop(true);
  hook?.stop();
  [mcp, server, hook] = [undefined, undefined, undefined];
  await h.close();
});

type Acct = { accountId: string; workspaceId: string; email: string };

async function setup(env: Record<string, string> = {}) {
  h = await harness({ env: { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8", ...env } });
  sent = [];
  h.deps.mailer = { send: async (m) => void sent.push(m) };
}

async function devAccount(plan: "dev" | "team" = "dev"): Promise<{ a: Acct; token: string }> {
  const a = await h.account(plan);
  return { a, token: await h.token(a, ["read", "write"]) };
}

async function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  const err = await errorOf(res);
  expect(err.code).toBe(code);
  return err;
}

const append = (token: string, filename: string, text: string) =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text } });
const appendById = (token: string, id: string, text: string) => h.request("POST", `/api/v1/notes/${id}/append`, { token, body: { text } });
const del = (token: string, id: string) => h.request("DELETE", `/api/v1/notes/${id}`, { token });
const restore = (token: string, id: string) => h.request("POST", `/api/v1/notes/${id}/restore`, { token });
const trash = (token: string, query = "") => h.request("GET", `/api/v1/trash${query}`, { token });
const read = (token: string, id: string) => h.request("GET", `/api/v1/notes/${id}`, { token });

async function created(res: TestResponse): Promise<{ id: string; byte_size: number }> {
  expect(res.status).toBeLessThan(300);
  return res.json();
}

/** A fresh app; an account with a live note, and another account with a note in its trash. */
async function liveAndForeignTrashed() {
  await setup();
  const { token } = await devAccount();
  const other = await devAccount();
  const live = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "live" } } }));
  const foreign = await created(await h.request("POST", "/api/v1/notes", { token: other.token, body: { note: { title: "theirs" } } }));
  expect((await del(other.token, foreign.id)).status).toBe(200);
  return { token, other, live, foreign };
}

async function listedIds(token: string, query = ""): Promise<string[]> {
  const res = await h.request("GET", `/api/v1/notes${query}`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }[]).map((n) => n.id);
}

async function storageOf(workspaceId: string): Promise<number> {
  const [ws] = await h.deps.db.select({ n: workspaces.storageUsed }).from(workspaces).where(eq(workspaces.id, workspaceId));
  return ws!.n;
}
const noteRows = { note_chunks: noteChunks, inbox_deliveries: inboxDeliveries, webhook_attempts: webhookAttempts };
async function rows(table: keyof typeof noteRows, noteId: string): Promise<number> {
  const t = noteRows[table];
  const [counted] = await h.deps.db.select({ n: count() }).from(t).where(eq(t.noteId, noteId));
  return counted!.n;
}
const setStorage = (workspaceId: string, bytes: number) => h.deps.db.update(workspaces).set({ storageUsed: bytes }).where(eq(workspaces.id, workspaceId));

/** What the scheduler does for the trash, as it does it (through the writer). */
const purge = () => runTask(h.deps, "trash-purge");

describe("DELETE, the trash list and restore", () => {
  test("DELETE moves a note to the trash: GET /trash lists it without its body, with trashed_at and purge_at; restore brings it back", async () => {
    await setup();
    const { token } = await devAccount();
    const note = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Runbook", plain_body: "1. page someone" } } }));
    const stream = await created(await append(token, "deploys.log", "deploy ok"));
    const trashedAt = h.clock.now();

    const gone = await del(token, stream.id);
    expect(gone.status).toBe(200);
    expect(await gone.json()).toEqual({ id: stream.id, deleted: true });
    h.clock.advance(1000);
    expect((await del(token, note.id)).status).toBe(200);
    // Deleting what is already in the trash is the 404 of a missing note.
    await expectError(await del(token, note.id), 404, "not_found");
    await expectError(await read(token, note.id), 404, "not_found");
    expect(await listedIds(token)).toEqual([]);

    const listed = await trash(token);
    expect(listed.status).toBe(200);
    expect(listed.headers.get("x-total-count")).toBe("2");
    const items = await listed.json();
    // Newest in the trash first; the stream shows the filename it had.
    expect(items.map((n: { id: string }) => n.id)).toEqual([note.id, stream.id]);
    expect(items[1]).toMatchObject({
      id: stream.id,
      kind: "stream",
      filename: "deploys.log",
      byte_size: 10,
      trashed_at: new Date(trashedAt).toISOString(),
      purge_at: new Date(trashedAt + 30 * DAY).toISOString(),
    });
    expect(items[0]).toMatchObject({ title: "Runbook", kind: "editable", filename: null, trashed_at: new Date(trashedAt + 1000).toISOString() });
    for (const item of items) expect(item).not.toHaveProperty("plain_body");
    // Paged like every list.
    const first = await trash(token, "?limit=1");
    expect((await first.json()).map((n: { id: string }) => n.id)).toEqual([note.id]);
    expect(first.headers.get("link")).toContain('rel="next"');
    await expectError(await trash(token, "?limit=0"), 422, "validation_failed");

    const back = await restore(token, stream.id);
    expect(back.status).toBe(200);
    const record = await back.json();
    expect(record).toMatchObject({ id: stream.id, kind: "stream", filename: "deploys.log", byte_size: 10 });
    expect(record).not.toHaveProperty("trashed_at");
    const byName = await h.request("GET", "/api/v1/notes/by-filename/deploys.log", { token });
    expect(await byName.json()).toMatchObject({ id: stream.id, plain_body: "deploy ok\n" });
    expect((await append(token, "deploys.log", "again")).status).toBe(200);
    expect((await restore(token, note.id)).status).toBe(200);
    expect((await (await read(token, note.id)).json()).plain_body).toBe("1. page someone");
    expect((await listedIds(token)).sort()).toEqual([note.id, stream.id].sort());
    expect(await (await trash(token)).json()).toEqual([]);
  });

  test("restore answers 404 for a live note, a missing one and another workspace's trashed note", async () => {
    const { token, other, live, foreign } = await liveAndForeignTrashed();

    await expectError(await restore(token, live.id), 404, "not_found");
    await expectError(await restore(token, "note_doesnotexist"), 404, "not_found");
    await expectError(await restore(token, foreign.id), 404, "not_found");
    expect(await (await trash(token)).json()).toEqual([]);
    expect((await (await trash(other.token)).json()).map((n: { id: string }) => n.id)).toEqual([foreign.id]);
  });

  test("scopes: the trash is read with read, restored with write; tokens pinned to a note and append-only tokens have no trash list", async () => {
    await setup();
    // Team: room for the four tokens (Dev holds three).
    const { a, token } = await devAccount("team");
    const s = await created(await append(token, "a.log", "x"));
    const reader = await h.token(a, ["read"]);
    const appender = await h.token(a, ["append"]);
    const pinned = await h.token(a, ["read", "write"], { noteId: s.id });
    expect((await del(token, s.id)).status).toBe(200);
    // No new token is pinned to a note in the trash.
    await expect(h.token(a, ["read"], { noteId: s.id })).rejects.toThrow(/not in this workspace/);
    expect((await trash(reader)).status).toBe(200);
    await expectError(await restore(reader, s.id), 403, "insufficient_scope");
    await expectError(await trash(appender), 403, "insufficient_scope");
    await expectError(await trash(pinned), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/trash"), 401, "unauthorized");
    // A pinned token restores nothing but its own note.
    const other = await created(await append(token, "b.log", "y"));
    expect((await del(token, other.id)).status).toBe(200);
    await expectError(await restore(pinned, other.id), 404, "not_found");
    expect((await restore(pinned, s.id)).status).toBe(200);
  });

  test("a read-only account lists its trash but restores nothing (403 account_read_only)", async () => {
    await setup();
    const { a, token } = await devAccount();
    const n = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x" } } }));
    expect((await del(token, n.id)).status).toBe(200);
    await h.deps.db.update(workspaces).set({ state: "read_only", lapsedAt: h.clock.now() }).where(eq(workspaces.id, a.workspaceId));
    expect((await (await trash(token)).json()).length).toBe(1);
    await expectError(await restore(token, n.id), 403, "account_read_only");
  });
});

describe("caps on restore", () => {
  test("no slot left: restore is 403 cap_exceeded (notes) and the note stays in the trash", async () => {
    await setup();
    const a = await h.account("free");
    await h.deps.writer.write(() => startTrial(h.deps, a.workspaceId));
    const token = await h.token(a);
    // The trial allows 100 notes.
    for (let i = 0; i < 2; i++) {
      const res = await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes: Array.from({ length: 50 }, (_, j) => ({ title: `n${i}-${j}` })) } });
      expect(res.status).toBe(201);
    }
    const victim = (await listedIds(token, "?limit=1"))[0]!;
    expect((await del(token, victim)).status).toBe(200);
    // Its slot is free at once: a new note takes it.
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "newcomer" } } })).status).toBe(201);
    const err = await expectError(await restore(token, victim), 403, "cap_exceeded");
    expect(err.details).toMatchObject({ cap: "notes", limit: 100, used: 100 });
    expect((await (await trash(token)).json()).map((n: { id: string }) => n.id)).toEqual([victim]);
  });

  test("a workspace over its storage cap (a plan with less room) cannot restore: 403 cap_exceeded (storage)", async () => {
    await setup();
    const { a, token } = await devAccount();
    const n = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "x".repeat(1000) } } }));
    expect((await del(token, n.id)).status).toBe(200);
    // Its bytes stay counted while it is in the trash.
    expect(await storageOf(a.workspaceId)).toBe(1000);
    await setStorage(a.workspaceId, 15 * 1024 * MB + 1);
    const err = await expectError(await restore(token, n.id), 403, "cap_exceeded");
    expect(err.details).toMatchObject({ cap: "storage", limit: 15 * 1024 * MB });
    // Exactly at the cap, the note's bytes are already inside it: the restore goes through.
    await setStorage(a.workspaceId, 15 * 1024 * MB);
    expect((await restore(token, n.id)).status).toBe(200);
    expect(await storageOf(a.workspaceId)).toBe(15 * 1024 * MB);
  });
});

describe("a trashed stream's filename", () => {
  test("an append to the trashed filename creates a new stream; the restored one comes back without a filename, reachable by id", async () => {
    await setup();
    const { token } = await devAccount();
    const old = await created(await append(token, "app.log", "old line"));
    expect((await del(token, old.id)).status).toBe(200);
    await expectError(await h.request("GET", "/api/v1/notes/by-filename/app.log", { token }), 404, "not_found");
    const fresh = await append(token, "app.log", "new line");
    expect(fresh.status).toBe(201);
    const newer = await fresh.json();
    expect(newer.id).not.toBe(old.id);

    // While the name is taken, the trash still shows the name the stream had.
    expect((await (await trash(token)).json())[0]).toMatchObject({ id: old.id, filename: "app.log" });
    const back = await restore(token, old.id);
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ id: old.id, filename: null });
    expect((await (await h.request("GET", "/api/v1/notes/by-filename/app.log", { token })).json()).id).toBe(newer.id);
    const appended = await appendById(token, old.id, "still here");
    expect(appended.status).toBe(200);
    expect(await appended.json()).toMatchObject({ id: old.id, filename: null, created: false });
    expect((await (await read(token, old.id)).json()).plain_body).toBe("old line\nstill here\n");
  });
});

describe("the purge", () => {
  test("30 days after trashing the note is deleted for good and its storage freed, inbox bodies included, to the byte", async () => {
    await setup();
    const { a, token } = await devAccount();
    const kept = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "k".repeat(123) } } }));
    const baseline = await storageOf(a.workspaceId);
    expect(baseline).toBe(kept.byte_size);

    const stream = await created(await append(token, "hooks.log", "started"));
    const inbox = await (await h.request("POST", `/api/v1/notes/${stream.id}/inbox`, { token })).json();
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "f".repeat(50 * KB), headers: TEXT })).status).toBe(202);
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "g".repeat(30 * KB), headers: TEXT })).status).toBe(202);
    await h.jobs.drain();
    const note = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "n".repeat(1000) } } }));
    const pinned = await h.token(a, ["read"], { noteId: stream.id });
    const withAll = await storageOf(a.workspaceId);
    expect(withAll).toBeGreaterThan(baseline + 80 * KB + 1000);

    expect((await del(token, stream.id)).status).toBe(200);
    h.clock.advance(DAY);
    expect((await del(token, note.id)).status).toBe(200);
    // In the trash, everything is still counted and kept.
    expect(await storageOf(a.workspaceId)).toBe(withAll);
    const acct = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(acct.usage).toMatchObject({ notes: 1, storage_bytes: withAll });
    expect(await rows("inbox_deliveries", stream.id)).toBe(2);

    h.clock.advance(29 * DAY - 1);
    await purge();
    expect((await (await trash(token)).json()).length).toBe(2);
    h.clock.advance(1);
    await purge();
    // The stream (trashed a day earlier) is purged; the note has a day to go.
    expect((await (await trash(token)).json()).map((n: { id: string }) => n.id)).toEqual([note.id]);
    expect(await storageOf(a.workspaceId)).toBe(baseline + 1000);
    for (const table of ["note_chunks", "inbox_deliveries", "webhook_attempts"] as const) expect(await rows(table, stream.id)).toBe(0);
    await expectError(await restore(token, stream.id), 404, "not_found");
    // A token pinned to the purged stream is revoked with it.
    await expectError(await h.request("GET", `/api/v1/notes/${stream.id}`, { token: pinned }), 401, "unauthorized");
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "late", headers: TEXT })).status).toBe(404);

    h.clock.advance(DAY);
    await purge();
    expect(await (await trash(token)).json()).toEqual([]);
    expect(await storageOf(a.workspaceId)).toBe(baseline);
    expect(await h.deps.db.select({ n: count() }).from(notes).where(eq(notes.workspaceId, a.workspaceId))).toEqual([{ n: 1 }]);
    // A purge with nothing due changes nothing.
    await purge();
    expect(await storageOf(a.workspaceId)).toBe(baseline);
  });

  test("inbox bodies pruned while the stream is in the trash are not freed twice", async () => {
    await setup();
    const { a, token } = await devAccount();
    const stream = await created(await append(token, "in.log", "x"));
    const inbox = await (await h.request("POST", `/api/v1/notes/${stream.id}/inbox`, { token })).json();
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "p".repeat(10 * KB), headers: TEXT })).status).toBe(202);
    await h.jobs.drain();
    expect((await del(token, stream.id)).status).toBe(200);
    // Delivered bodies are pruned after 7 days, while the stream is still in the trash.
    h.clock.advance(8 * DAY);
    await runTask(h.deps, "inbox-prune");
    expect(await rows("inbox_deliveries", stream.id)).toBe(0);
    h.clock.advance(22 * DAY);
    await purge();
    expect(await storageOf(a.workspaceId)).toBe(0);
  });
});

const purgeNow = (token: string, id: string) => h.request("DELETE", `/api/v1/trash/${id}`, { token });

describe("DELETE /trash/{id}: the purge, at once", () => {
  test("a trashed note is deleted for good at once: 200 {id, purged}, gone from the trash, its rows and storage freed, tokens pinned to it revoked", async () => {
    await setup();
    const { a, token } = await devAccount();
    const kept = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "k".repeat(100) } } }));
    const stream = await created(await append(token, "big.log", "b".repeat(40 * KB)));
    const inbox = await (await h.request("POST", `/api/v1/notes/${stream.id}/inbox`, { token })).json();
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "f".repeat(20 * KB), headers: TEXT })).status).toBe(202);
    await h.jobs.drain();
    const pinned = await h.token(a, ["read"], { noteId: stream.id });
    expect(await storageOf(a.workspaceId)).toBeGreaterThan(kept.byte_size + 60 * KB);

    expect((await del(token, stream.id)).status).toBe(200);
    const res = await purgeNow(token, stream.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: stream.id, purged: true });
    expect(await (await trash(token)).json()).toEqual([]);
    expect(await storageOf(a.workspaceId)).toBe(kept.byte_size);
    for (const table of ["note_chunks", "inbox_deliveries", "webhook_attempts"] as const) expect(await rows(table, stream.id)).toBe(0);
    await expectError(await h.request("GET", `/api/v1/notes/${stream.id}`, { token: pinned }), 401, "unauthorized");
    // Purged is gone: neither a second purge nor a restore finds it.
    await expectError(await purgeNow(token, stream.id), 404, "not_found");
    await expectError(await restore(token, stream.id), 404, "not_found");
    // The filename is a new stream's again.
    expect((await append(token, "big.log", "again")).status).toBe(201);
  });

  test("404 for a live note, a missing one, a malformed id and another account's trashed note, which stays there", async () => {
    const { token, other, live, foreign } = await liveAndForeignTrashed();

    await expectError(await purgeNow(token, live.id), 404, "not_found");
    await expectError(await purgeNow(token, "note_doesnotexist"), 404, "not_found");
    await expectError(await purgeNow(token, "%E2%80%AE"), 404, "not_found");
    await expectError(await purgeNow(token, foreign.id), 404, "not_found");
    expect((await read(token, live.id)).status).toBe(200);
    expect((await (await trash(other.token)).json()).map((n: { id: string }) => n.id)).toEqual([foreign.id]);
    expect((await purgeNow(other.token, foreign.id)).status).toBe(200);
  });

  test("scopes: purging takes write; read and append tokens are 403, no token 401, a pinned token purges only its own note; a read-only account purges nothing", async () => {
    await setup();
    const { a, token } = await devAccount("team");
    const s = await created(await append(token, "a.log", "x"));
    const t = await created(await append(token, "b.log", "y"));
    const reader = await h.token(a, ["read"]);
    const appender = await h.token(a, ["append"]);
    const pinned = await h.token(a, ["read", "write"], { noteId: s.id });
    expect((await del(token, s.id)).status).toBe(200);
    expect((await del(token, t.id)).status).toBe(200);

    await expectError(await purgeNow(reader, s.id), 403, "insufficient_scope");
    await expectError(await purgeNow(appender, s.id), 403, "insufficient_scope");
    await expectError(await h.request("DELETE", `/api/v1/trash/${s.id}`), 401, "unauthorized");
    await expectError(await purgeNow(pinned, t.id), 404, "not_found");
    expect((await purgeNow(pinned, s.id)).status).toBe(200);

    await h.deps.db.update(workspaces).set({ state: "read_only", lapsedAt: h.clock.now() }).where(eq(workspaces.id, a.workspaceId));
    await expectError(await purgeNow(token, t.id), 403, "account_read_only");
    expect((await (await trash(token)).json()).map((n: { id: string }) => n.id)).toEqual([t.id]);
  });

  test("the OpenAPI document describes it", async () => {
    await setup();
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    const op = doc.paths["/api/v1/trash/{id}"].delete;
    expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Purged" });
    expect(doc.components.schemas.Purged.required.sort()).toEqual(["id", "purged"]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["401", "403", "404", "507"]));
    expect(doc.components.responses.E507.headers["Retry-After"]).toBeDefined();
  });
});

describe("a trashed stream is invisible everywhere, and works again after a restore", () => {
  test("lists, reads, appends, pinned tokens, its inbox, its webhook, its dead-man's switch, MCP and exports", async () => {
    await setup();
    hook = receiver();
    const { a, token } = await devAccount();
    const stream = await created(await append(token, "ops.log", "first"));
    const patched = await h.request("PATCH", `/api/v1/notes/${stream.id}`, {
      token,
      body: { note: { webhook_url: `${hook.url}/hook`, expected_interval_seconds: 3600 } },
    });
    expect(patched.status).toBe(200);
    const inbox = await (await h.request("POST", `/api/v1/notes/${stream.id}/inbox`, { token })).json();
    const pinned = await h.token(a, ["read", "write"], { noteId: stream.id });
    const folder = await created(await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Ops" } } }));
    expect((await h.request("PATCH", `/api/v1/notes/${stream.id}`, { token, body: { note: { folder_id: folder.id } } })).status).toBe(200);

    // An append whose delivery is still queued when the stream goes to the trash is never delivered.
    // (The runner is not woken by its enqueue, so that the delivery surely waits for the trash:
    // PostgreSQL's round trips before the delete would otherwise give the runner time to claim it.)
    const runner = h.deps.jobs;
    h.deps.jobs = { wake: () => {} };
    expect((await append(token, "ops.log", "just before")).status).toBe(200);
    expect((await del(token, stream.id)).status).toBe(200);
    h.deps.jobs = runner;
    await h.jobs.drain();
    expect(hook.received).toHaveLength(0);

    expect(await listedIds(token)).toEqual([]);
    expect(await listedIds(token, "?kind=stream")).toEqual([]);
    expect(await listedIds(token, `?folder_id=${folder.id}`)).toEqual([]);
    const folders = await (await h.request("GET", "/api/v1/folders", { token })).json();
    expect(folders.find((f: { id: string }) => f.id === folder.id)).toMatchObject({ note_count: 0 });
    await expectError(await read(token, stream.id), 404, "not_found");
    await expectError(await h.request("GET", "/api/v1/notes/by-filename/ops.log", { token }), 404, "not_found");
    await expectError(await appendById(token, stream.id, "x"), 404, "not_found");
    await expectError(await h.request("PATCH", `/api/v1/notes/${stream.id}`, { token, body: { note: { title: "x" } } }), 404, "not_found");
    await expectError(await h.request("GET", `/api/v1/notes/${stream.id}/webhook/deliveries`, { token }), 404, "not_found");
    await expectError(await h.request("GET", `/api/v1/notes/${stream.id}/inbox/deliveries`, { token }), 404, "not_found");
    // Its pinned token sees nothing, and cannot bring a stream into being by its old filename.
    await expectError(await read(pinned, stream.id), 404, "not_found");
    await expectError(await appendById(pinned, stream.id, "x"), 404, "not_found");
    await expectError(await append(pinned, "ops.log", "x"), 404, "not_found");
    expect(await listedIds(pinned)).toEqual([]);
    // Its inbox URL is a 404 like an unknown one, and nothing is stored.
    await expectError(await h.request("POST", `/h/${inbox.token}`, { body: "while trashed", headers: TEXT }), 404, "not_found");
    expect(await rows("inbox_deliveries", stream.id)).toBe(0);
    // Its dead-man's switch stays silent, however long the silence.
    h.clock.advance(2 * 3600_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent.filter((m) => m.subject.includes("quiet"))).toHaveLength(0);
    // The hosted MCP tools see what REST sees.
    const client = await connectMcp(token);
    expect((await tool(client, "list_notes")).notes).toEqual([]);
    expect(await toolError(client, "read_note", { id: stream.id })).toStartWith("not_found:");
    // The export leaves it out.
    const exp = await (await h.request("POST", "/api/v1/export", { token })).json();
    await h.jobs.drain();
    const ready = await (await h.request("GET", `/api/v1/export/${exp.id}`, { token })).json();
    const zip = new Uint8Array(await (await h.request("GET", new URL(ready.download_url).pathname, { token })).arrayBuffer());
    expect(JSON.parse(new TextDecoder().decode(unzipSync(zip)["manifest.json"])).notes).toEqual([]);

    // Restored: everything it had works again.
    const restoredAt = h.clock.now();
    const back = await restore(token, stream.id);
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({
      filename: "ops.log",
      folder_id: folder.id,
      webhook_status: "enabled",
      inbox_enabled: true,
      expected_interval_seconds: 3600,
      deadman_status: "ok",
    });
    expect(await listedIds(token, `?folder_id=${folder.id}`)).toEqual([stream.id]);
    expect((await read(pinned, stream.id)).status).toBe(200);
    expect((await appendById(pinned, stream.id, "from the pinned token")).status).toBe(200);
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "after restore", headers: TEXT })).status).toBe(202);
    await h.jobs.drain();
    await hook.waitFor(2);
    const hookTexts = hook.received.map((r) => JSON.parse(r.body).data.text);
    expect(hookTexts[0]).toBe("from the pinned token\n");
    expect(hookTexts[1]).toContain("after restore");
    const body = (await (await read(token, stream.id)).json()).plain_body as string;
    expect(body).toStartWith("first\njust before\nfrom the pinned token\n");
    expect(body).toContain("after restore");
    expect((await tool(client, "list_notes")).notes.map((n: { id: string }) => n.id)).toEqual([stream.id]);
    // The switch counts from the restore (and the inbox's append): no alert for the time in the trash.
    const lastWrite = Date.parse((await (await read(token, stream.id)).json()).last_write_at);
    expect(lastWrite).toBeGreaterThanOrEqual(restoredAt);
    h.clock.t = lastWrite + 3600_000 - 1;
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent.filter((m) => m.subject.includes("quiet"))).toHaveLength(0);
    h.clock.advance(1);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent.filter((m) => m.subject.includes("quiet"))).toHaveLength(1);
  });

  test("restoring re-arms the dead-man's switch from the restore, not from the last write before the trash", async () => {
    await setup();
    const { token } = await devAccount();
    const stream = await created(await append(token, "cron.log", "ran"));
    expect((await h.request("PATCH", `/api/v1/notes/${stream.id}`, { token, body: { note: { expected_interval_seconds: 3600 } } })).status).toBe(200);
    expect((await del(token, stream.id)).status).toBe(200);
    h.clock.advance(5 * 3600_000);
    expect((await restore(token, stream.id)).status).toBe(200);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent).toHaveLength(0);
    h.clock.advance(3600_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(sent.filter((m) => m.subject.includes("quiet"))).toHaveLength(1);
  });

  test("MCP delete_note moves the note to the trash, where REST finds it", async () => {
    await setup();
    const { token } = await devAccount();
    const n = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "agent's" } } }));
    const client = await connectMcp(token);
    expect(await tool(client, "delete_note", { id: n.id })).toEqual({ id: n.id, deleted: true });
    expect((await (await trash(token)).json()).map((x: { id: string }) => x.id)).toEqual([n.id]);
  });
});

/** The app on a loopback port, so the MCP SDK's own HTTP client talks to it. */
async function connectMcp(token: string): Promise<Client> {
  const handle = buildHandler(h.deps);
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r, srv) => handle(r, srv.requestIP(r)?.address) });
  const client = new Client({ name: "trash-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  mcp = client;
  return client;
}

describe("the trial's trash and a user's", () => {
  test("subscribing brings back what the trial's end trashed, not what the user deleted", async () => {
    await setup();
    const a = await h.account("free");
    await h.deps.writer.write(() => startTrial(h.deps, a.workspaceId));
    const token = await h.token(a);
    const deleted = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "unwanted" } } }));
    expect((await del(token, deleted.id)).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      h.clock.advance(60_000);
      ids.push((await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: `n${i}` } } }))).id);
    }
    // The trial ends; 30 days later the two oldest notes above the free cap of 10 go to the trash.
    h.clock.advance(14 * DAY);
    await runTask(h.deps, "lifecycle");
    h.clock.advance(30 * DAY);
    await runTask(h.deps, "lifecycle");
    const inTrash = (await (await trash(token)).json()).map((n: { id: string }) => n.id);
    expect(inTrash.sort()).toEqual([...ids.slice(0, 2), deleted.id].sort());
    // Read-only after the trial: the trash is listed but nothing is restored by hand.
    await expectError(await restore(token, ids[0]!), 403, "account_read_only");

    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    expect((await (await trash(token)).json()).map((n: { id: string }) => n.id)).toEqual([deleted.id]);
    expect(await listedIds(token, "?limit=200")).toHaveLength(12);
  });
});

describe("the browser's trash", () => {
  async function signedIn(a: Acct) {
    const [account] = await h.deps.db.select().from(accounts).where(eq(accounts.id, a.accountId));
    const { secret } = await createSession(h.deps, account!);
    const cookie = `ns_session=${secret}`;
    const get = async (path: string) => {
      const res = await h.request("GET", path, { headers: { cookie } });
      return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
    };
    const post = async (path: string, fields: Record<string, string>) => {
      const res = await h.request("POST", path, {
        headers: { cookie, origin: "http://notestream.test", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      });
      return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
    };
    return { get, post };
  }

  test("deleting says the note went to the trash for 30 days; the Trash view lists it and its Restore button brings it back", async () => {
    await setup();
    const { a, token } = await devAccount();
    const n = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Shopping list" } } }));
    const b = await signedIn(a);
    const notePage = await b.get(`/notes/${n.id}`);
    expect(notePage.text).toContain('href="/trash"');
    expect(notePage.text).toMatch(/data-confirm="[^"]*trash[^"]*"/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(notePage.text)![1]!;

    const deleted = await b.post(`/notes/${n.id}/delete`, { _csrf: csrf });
    expect(deleted.status).toBe(303);
    const flash = decodeURIComponent(deleted.location.replace(/\+/g, " "));
    expect(flash).toContain("trash");
    expect(flash).toContain("30 days");
    expect((await b.get(`/notes/${n.id}`)).status).toBe(404);

    const view = await b.get("/trash");
    expect(view.status).toBe(200);
    expect(view.text).toContain("Shopping list");
    expect(view.text).toContain(`action="/trash/${n.id}/restore"`);
    // A restore without the CSRF token is refused.
    expect((await b.post(`/trash/${n.id}/restore`, {})).status).toBe(403);
    const restored = await b.post(`/trash/${n.id}/restore`, { _csrf: csrf });
    expect(restored.status).toBe(303);
    expect(restored.location).toStartWith(`/notes/${n.id}`);
    expect((await b.get(`/notes/${n.id}`)).status).toBe(200);
    expect((await b.get("/trash")).text).not.toContain("Shopping list");
  });

  test("a refused restore goes back to the Trash view with the reason", async () => {
    await setup();
    const { a, token } = await devAccount();
    const n = await created(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "x".repeat(10) } } }));
    expect((await del(token, n.id)).status).toBe(200);
    await setStorage(a.workspaceId, 16 * 1024 * MB);
    const b = await signedIn(a);
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await b.get("/trash")).text)![1]!;
    const refused = await b.post(`/trash/${n.id}/restore`, { _csrf: csrf });
    expect(refused.status).toBe(303);
    expect(refused.location).toStartWith("/trash");
    expect(decodeURIComponent(refused.location.replace(/\+/g, " "))).toContain("storage");
  });
});
