/**
 * Usage and list totals are kept on the workspace's and the folders' rows (migrations/0018), not
 * counted per request: after every kind of write that changes them they equal a fresh count of
 * the notes, and the API answers with them (GET /account, X-Total-Count of /notes, /trash and
 * /folders, a folder's note_count). Storage is the bytes of every note, trashed ones and inbox
 * bodies included.
 */
import { afterEach, expect, test } from "bun:test";
import { and, count, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sqlRun } from "../../src/db/sql";
import { folders, inboxDeliveries, notes, workspaces } from "../../src/db/tables";
import { runLifecycle, startTrial, subscribe } from "../../src/modules/accounts/lifecycle";
import { storedBytes } from "../../src/modules/inbox/storage";
import { createRichNote } from "../../src/modules/notes/rich";
import { webPrincipal } from "../../src/web/session";
import { runTask } from "../../src/schedule";
import { harness, onPostgres, type Harness, type TestResponse } from "../helpers/harness";

const DAY = 86_400_000;
const TEXT = { "content-type": "text/plain" };

let h: Harness;
afterEach(() => h.close());

type Acct = { accountId: string; workspaceId: string; email: string };

async function setup(plan: "dev" | "free" = "dev"): Promise<{ a: Acct; token: string }> {
  h = await harness();
  const a = await h.account(plan);
  if (plan === "free") await h.deps.writer.write(() => startTrial(h.deps, a.workspaceId));
  return { a, token: await h.token(a, ["read", "write"]) };
}

async function ok(res: TestResponse | Promise<TestResponse>): Promise<any> {
  const r = await res;
  expect(r.status).toBeLessThan(300);
  return r.json();
}

const append = (token: string, filename: string, text: string) =>
  ok(h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text } }));
const create = (token: string, note: Record<string, unknown>) => ok(h.request("POST", "/api/v1/notes", { token, body: { note } }));
const patch = (token: string, id: string, note: Record<string, unknown>) => ok(h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } }));
const folder = async (token: string, name: string): Promise<string> => (await ok(h.request("POST", "/api/v1/folders", { token, body: { folder: { name } } }))).id;

/** What a fresh count of the notes says, beside what the rows keep. */
async function counts(workspaceId: string) {
  const { db } = h.deps;
  const n = async (...conds: SQL[]) => (await db.select({ n: count() }).from(notes).where(and(eq(notes.workspaceId, workspaceId), ...conds)))[0]!.n;
  const active = isNull(notes.trashedAt);
  const [bytes] = await db.select({ b: sql<number>`coalesce(sum(${notes.byteSize}), 0)`.mapWith(Number) }).from(notes).where(eq(notes.workspaceId, workspaceId));
  const [inbox] = await db
    .select({ b: storedBytes })
    .from(inboxDeliveries)
    .innerJoin(notes, eq(notes.id, inboxDeliveries.noteId))
    .where(eq(notes.workspaceId, workspaceId));
  const byFolder = await db
    .select({ id: folders.id, n: count(notes.id) })
    .from(folders)
    .leftJoin(notes, and(eq(notes.folderId, folders.id), active))
    .where(eq(folders.workspaceId, workspaceId))
    .groupBy(folders.id);
  const fresh = {
    plain: await n(active, eq(notes.format, "plain")),
    rich: await n(active, eq(notes.format, "rich")),
    streams: await n(active, eq(notes.kind, "stream")),
    trashed: await n(isNotNull(notes.trashedAt)),
    storage: bytes!.b + inbox!.b,
    folders: Object.fromEntries(byFolder.map((f) => [f.id, f.n])),
  };
  const [ws] = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId));
  const keptFolders = await db.select({ id: folders.id, n: folders.noteCount }).from(folders).where(eq(folders.workspaceId, workspaceId));
  const kept = {
    plain: ws!.plainNotes,
    rich: ws!.richNotes,
    streams: ws!.streamNotes,
    trashed: ws!.trashedNotes,
    storage: ws!.storageUsed,
    folders: Object.fromEntries(keptFolders.map((f) => [f.id, f.n])),
  };
  return { fresh, kept };
}

/** The kept counts equal a fresh count, and the API's usage and totals say the same. */
async function expectKept(a: { workspaceId: string }, token: string, step: string) {
  const { fresh, kept } = await counts(a.workspaceId);
  expect({ step, kept }).toEqual({ step, kept: fresh });
  const account = await ok(h.request("GET", "/api/v1/account", { token }));
  expect({ step, usage: account.usage }).toMatchObject({
    step,
    usage: { notes: fresh.plain + fresh.rich, plain_notes: fresh.plain, rich_notes: fresh.rich, storage_bytes: fresh.storage },
  });
  const total = async (path: string) => Number((await h.request("GET", path, { token })).headers.get("x-total-count"));
  expect({ step, totals: [await total("/api/v1/notes"), await total("/api/v1/notes?kind=stream"), await total("/api/v1/notes?kind=editable"), await total("/api/v1/trash")] }).toEqual({
    step,
    totals: [fresh.plain + fresh.rich, fresh.streams, fresh.plain + fresh.rich - fresh.streams, fresh.trashed],
  });
  const listed = (await ok(h.request("GET", "/api/v1/folders", { token }))) as { id: string; note_count: number }[];
  expect({ step, folders: Object.fromEntries(listed.map((f) => [f.id, f.note_count])) }).toEqual({ step, folders: fresh.folders });
  for (const id of Object.keys(fresh.folders)) {
    expect({ step, id, total: await total(`/api/v1/notes?folder_id=${id}`) }).toEqual({ step, id, total: fresh.folders[id]! });
  }
}

test("creates, bulk creates, rich notes, first appends and edits count at once, in the workspace and its folders", async () => {
  const { a, token } = await setup();
  await expectKept(a, token, "new account");
  const inbox = await folder(token, "In");
  await create(token, { title: "one", plain_body: "hello" });
  await create(token, { title: "filed", plain_body: "in a folder", folder_id: inbox });
  await expectKept(a, token, "create");
  await ok(h.request("POST", "/api/v1/notes/bulk", { token, body: { notes: [{ title: "b1" }, { title: "b2", plain_body: "x".repeat(300), folder_id: inbox }, { title: "b3" }] } }));
  await expectKept(a, token, "bulk");
  const ctx = { deps: h.deps, principal: webPrincipal(a.accountId, a.workspaceId, Infinity) };
  await createRichNote({ ctx, title: "Rich", html: "<p>rich <strong>text</strong></p>", folderId: inbox });
  await expectKept(a, token, "rich");
  const stream = await append(token, "app.log", "first line");
  await append(token, "other.log", "another stream");
  await expectKept(a, token, "first appends");
  await append(token, "app.log", "y".repeat(5000));
  await expectKept(a, token, "append growing storage");
  const edited = await create(token, { title: "edited", plain_body: "short" });
  await patch(token, edited.id, { plain_body: "a longer body than before" });
  await patch(token, edited.id, { title: "renamed" });
  await patch(token, stream.id, { title: "a stream's title" });
  await expectKept(a, token, "edits");
});

test("the trash: a delete, a restore, DELETE /trash/{id}, the 30-day purge and inbox bodies", async () => {
  const { a, token } = await setup();
  const f = await folder(token, "F");
  const note = await create(token, { title: "note", plain_body: "z".repeat(700), folder_id: f });
  const stream = await append(token, "in.log", "line");
  const hook = await ok(h.request("POST", `/api/v1/notes/${stream.id}/inbox`, { token }));
  expect((await h.request("POST", `/h/${hook.token}`, { body: "p".repeat(4000), headers: TEXT })).status).toBe(202);
  await h.jobs.drain();
  await expectKept(a, token, "inbox delivery");
  await ok(h.request("DELETE", `/api/v1/notes/${note.id}`, { token }));
  await ok(h.request("DELETE", `/api/v1/notes/${stream.id}`, { token }));
  await expectKept(a, token, "delete");
  await ok(h.request("POST", `/api/v1/notes/${note.id}/restore`, { token }));
  await expectKept(a, token, "restore");
  await ok(h.request("DELETE", `/api/v1/trash/${stream.id}`, { token }));
  await expectKept(a, token, "purge by DELETE /trash/{id}");
  await ok(h.request("DELETE", `/api/v1/notes/${note.id}`, { token }));
  h.clock.advance(31 * DAY);
  await runTask(h.deps, "trash-purge");
  await expectKept(a, token, "the 30-day purge");
});

test("moves between folders, out of them and back, in the trash and out, and a deleted folder", async () => {
  const { a, token } = await setup();
  const [f1, f2] = [await folder(token, "One"), await folder(token, "Two")];
  const n = await create(token, { title: "mover", folder_id: f1 });
  await create(token, { title: "stays", folder_id: f1 });
  const stream = await append(token, "s.log", "line");
  await patch(token, n.id, { folder_id: f2 });
  await expectKept(a, token, "move");
  await patch(token, n.id, { folder_id: null });
  await patch(token, stream.id, { folder_id: f2 });
  await expectKept(a, token, "out of a folder, a stream into one");
  await patch(token, n.id, { folder_id: f2 });
  await ok(h.request("DELETE", `/api/v1/notes/${n.id}`, { token }));
  await expectKept(a, token, "trashed in a folder");
  await ok(h.request("POST", `/api/v1/notes/${n.id}/restore`, { token }));
  await expectKept(a, token, "restored into its folder");
  await ok(h.request("DELETE", `/api/v1/folders/${f2}`, { token }));
  await expectKept(a, token, "folder deleted");
});

test("retention: a full drop_oldest stream dropping its oldest lines, and lines past retention_days", async () => {
  const { a, token } = await setup();
  // Dev caps a stream at 3 MB: thirty 100 KB lines and one more fill it.
  let s = await append(token, "full.log", "a".repeat(100 * 1024 - 1));
  for (let i = 1; i < 30; i++) s = await append(token, "full.log", "a".repeat(100 * 1024 - 1));
  await append(token, "full.log", "b".repeat(3 * 1024 * 1024 - 30 * 100 * 1024 - 1));
  await patch(token, s.id, { retention: "drop_oldest" });
  const dropped = await append(token, "full.log", "c".repeat(150 * 1024));
  expect(dropped.dropped_bytes).toBeGreaterThan(0);
  await expectKept(a, token, "drop_oldest");
  const old = await append(token, "old.log", "from the first day");
  await patch(token, old.id, { retention_days: 1 });
  h.clock.advance(2 * DAY);
  await append(token, "old.log", "from the third day");
  await runTask(h.deps, "retention");
  expect((await ok(h.request("GET", `/api/v1/notes/${old.id}`, { token }))).plain_body).toBe("from the third day\n");
  await expectKept(a, token, "retention_days");
});

test("workspace changes: a trial's end trashes notes above the cap, a subscription brings them back; a team and deleted notes of an account", async () => {
  const { a, token } = await setup("free");
  await append(token, "trial.log", "line");
  for (let i = 0; i < 14; i++) {
    h.clock.advance(60_000);
    await create(token, { title: `n${i}` });
  }
  h.clock.t = (await h.deps.db.select().from(workspaces).where(eq(workspaces.id, a.workspaceId)))[0]!.trialEndsAt!;
  await h.deps.writer.write(() => runLifecycle(h.deps));
  h.clock.advance(30 * DAY);
  expect((await h.deps.writer.write(() => runLifecycle(h.deps))).trashed).toBe(5);
  await expectKept(a, token, "trial ended, notes above the cap trashed");
  await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
  await expectKept(a, token, "subscribed: the trash comes back");

  const team = { accountId: a.accountId, workspaceId: await h.team(a.email) };
  const teamToken = await h.token(team, ["read", "write"]);
  await create(teamToken, { title: "team note" });
  await append(teamToken, "team.log", "line");
  await expectKept(team, teamToken, "team");
  await expectKept(a, token, "the personal workspace beside the team");
  // What an account's deletion runs first: its notes deleted in batches, their rows cascading
  // (their bytes stay on the row, which goes next).
  await h.deps.writer.write(() => h.deps.db.delete(notes).where(eq(notes.workspaceId, a.workspaceId)));
  const { fresh, kept } = await counts(a.workspaceId);
  expect({ ...kept, storage: 0 }).toEqual({ ...fresh, storage: 0 });
  expect(kept).toMatchObject({ plain: 0, rich: 0, streams: 0, trashed: 0 });
  await expectKept(team, teamToken, "the team untouched");
});

test("the migration counts what was stored before it (SQLite 0018, PostgreSQL 0007)", async () => {
  const { a, token } = await setup();
  const f = await folder(token, "F");
  await create(token, { title: "one", folder_id: f });
  const gone = await create(token, { title: "two", folder_id: f });
  await append(token, "s.log", "line");
  await ok(h.request("DELETE", `/api/v1/notes/${gone.id}`, { token }));
  // As a database of the release before would hold them: nothing counted.
  await h.deps.writer.write(async () => {
    await h.deps.db.update(workspaces).set({ plainNotes: 0, richNotes: 0, streamNotes: 0, trashedNotes: 0 });
    await h.deps.db.update(folders).set({ noteCount: 0 });
  });
  const file = onPostgres ? "migrations-pg/0007_kept_counts.sql" : "migrations/0018_kept_counts.sql";
  const backfill = readFileSync(join(import.meta.dir, "../..", file), "utf8")
    .split("--> statement-breakpoint")
    .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
    .filter((s) => s.startsWith("UPDATE"));
  expect(backfill).toHaveLength(2);
  await h.deps.writer.write(async () => {
    for (const statement of backfill) await sqlRun(h.deps.store, statement);
  });
  const { kept } = await counts(a.workspaceId);
  expect(kept).toMatchObject({ plain: 2, streams: 1, trashed: 1, folders: { [f]: 1 } });
  await expectKept(a, token, "after the migration's count");
});
