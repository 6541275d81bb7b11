import { afterEach, describe, expect, test } from "bun:test";
import { and, asc, count, eq, isNotNull, isNull, type SQL } from "drizzle-orm";
import { notes as notesTable, tokens, workspaces } from "../../src/db/tables";
import { runAllTasks, runTask } from "../../src/schedule";
import { MB, TRIAL_NOTES, TRIAL_STORAGE } from "../../src/limits/plans";
import { AppError } from "../../src/http/errors";
import { lapse, runLifecycle, startTrial, subscribe } from "../../src/modules/accounts/lifecycle";
import { mintExtensionToken } from "../../src/modules/tokens/service";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

const MINUTE = 60_000;
const DAY = 24 * 3600 * 1000;

let h: Harness;
afterEach(() => h.close());


type Acct = { accountId: string; workspaceId: string; email: string };

async function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect((await errorOf(res)).code).toBe(code);
}

/** One pass of the scheduler's lifecycle task, through the writer as the scheduler runs it. */
const lifecycle = () => h.deps.writer.write(() => runLifecycle(h.deps));

async function workspace(id: string) {
  const [ws] = await h.deps.db
    .select({
      state: workspaces.state,
      plan: workspaces.plan,
      trial_used: workspaces.trialUsed,
      trial_ends_at: workspaces.trialEndsAt,
      trash_due_at: workspaces.trashDueAt,
      storage_used: workspaces.storageUsed,
    })
    .from(workspaces)
    .where(eq(workspaces.id, id));
  return ws!;
}

async function noteCount(workspaceId: string, where?: SQL) {
  return (await h.deps.db.select({ n: count() }).from(notesTable).where(and(eq(notesTable.workspaceId, workspaceId), where)))[0]!.n;
}

/** A rich note, which only the browser makes: inserted directly. */
async function insertRichNote(workspaceId: string, i: number) {
  const now = h.clock.now();
  await h.deps.db.insert(notesTable).values({
    id: `note_rich${i}_${workspaceId}`,
    workspaceId,
    kind: "editable",
    format: "rich",
    filename: null,
    title: `rich ${i}`,
    body: "",
    richHtml: "<p></p>",
    byteSize: 0,
    createdAt: now,
    updatedAt: now,
    lastWriteAt: now,
  });
}

/** A stream inserted directly, taking a filename. */
function insertStream(workspaceId: string, id: string, filename: string) {
  const now = h.clock.now();
  return h.deps.db
    .insert(notesTable)
    .values({ id, workspaceId, kind: "stream", format: "plain", filename, title: filename, byteSize: 0, createdAt: now, updatedAt: now, lastWriteAt: now });
}

async function startTrialFor(a: Acct) {
  return h.deps.writer.write(() => startTrial(h.deps, a.workspaceId));
}

async function create(token: string, title: string, body = ""): Promise<{ id: string; byte_size: number }> {
  const res = await h.request("POST", "/api/v1/notes", { token, body: { note: { title, plain_body: body } } });
  expect(res.status).toBe(201);
  return res.json();
}

async function append(token: string, filename: string, text: string) {
  return h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: { text } });
}

async function account(token: string) {
  const res = await h.request("GET", "/api/v1/account", { token });
  expect(res.status).toBe(200);
  return res.json();
}

/**
 * A free account in its trial with 15 notes, one a minute: first the stream old.log, then 14
 * editable notes of 100 bytes. Returns the notes oldest first, with their sizes.
 */
async function trialWith15Notes() {
  const a = await h.account("free");
  await startTrialFor(a);
  const token = await h.token(a);
  const notes: { id: string; size: number }[] = [];
  const s = await append(token, "old.log", "first line");
  expect(s.status).toBe(201);
  const stream = await s.json();
  notes.push({ id: stream.id, size: stream.byte_size });
  for (let i = 0; i < 14; i++) {
    h.clock.advance(MINUTE);
    const n = await create(token, `note ${i}`, "x".repeat(100));
    notes.push({ id: n.id, size: n.byte_size });
  }
  return { a, token, notes };
}

/** Moves the clock to the end of the trial and runs the lifecycle: the trial ends. */
async function endTrial(a: Acct) {
  h.clock.t = (await workspace(a.workspaceId)).trial_ends_at!;
  expect((await lifecycle()).trialsEnded).toBe(1);
  expect((await workspace(a.workspaceId)).state).toBe("trial_ended");
}

describe("the API trial", () => {
  test("a free account starts its trial: tokens can be minted and the REST API works", async () => {
    h = await harness();
    const a = await h.account("free");
    await expect(h.token(a)).rejects.toThrow(/no API access/);
    const ws = await startTrialFor(a);
    expect(ws.state).toBe("trial");
    expect(ws.trialEndsAt).toBe(h.clock.now() + 14 * DAY);

    const token = await h.token(a);
    expect((await append(token, "events.log", "hello")).status).toBe(201);
    expect((await append(token, "events.log", "again")).status).toBe(200);
    const note = await create(token, "Runbook", "1. page someone");
    expect((await h.request("GET", `/api/v1/notes/${note.id}`, { token })).status).toBe(200);
    const acct = await account(token);
    expect(acct).toMatchObject({
      plan: "free",
      state: "trial",
      api_access: true,
      trial_ends_at: new Date(h.clock.now() + 14 * DAY).toISOString(),
      usage: { notes: 2 },
      caps: { notes: TRIAL_NOTES, plain_notes: null, rich_notes: null, storage_bytes: TRIAL_STORAGE },
    });
  });

  test("the trial allows 100 notes, rich and plain counted together", async () => {
    h = await harness();
    const a = await h.account("free");
    await startTrialFor(a);
    const token = await h.token(a);
    for (let i = 0; i < 10; i++) await insertRichNote(a.workspaceId, i);
    for (const n of [50, 40]) {
      const res = await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes: Array.from({ length: n }, (_, i) => ({ title: `n${i}` })) } });
      expect(res.status).toBe(201);
    }
    expect(await noteCount(a.workspaceId)).toBe(100);
    const refused = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "one too many" } } });
    expect(refused.status).toBe(403);
    expect(await errorOf(refused)).toMatchObject({ code: "cap_exceeded", details: { cap: "notes", limit: 100, used: 100 } });
    await expectError(await append(token, "new.log", "x"), 403, "cap_exceeded");
    expect(await noteCount(a.workspaceId)).toBe(100);
    expect((await account(token)).usage).toMatchObject({ notes: 100, plain_notes: 90, rich_notes: 10 });
  });

  test("the trial allows 300 MB of storage", async () => {
    h = await harness();
    const a = await h.account("free");
    await startTrialFor(a);
    const token = await h.token(a);
    expect((await append(token, "big.log", "a")).status).toBe(201); // 2 bytes
    await h.deps.db.update(workspaces).set({ storageUsed: 300 * MB - 3 }).where(eq(workspaces.id, a.workspaceId));
    // "ab\n" is 3 bytes: exactly up to the cap.
    expect((await append(token, "big.log", "ab")).status).toBe(200);
    expect((await workspace(a.workspaceId)).storage_used).toBe(300 * MB);
    const refused = await append(token, "big.log", "c");
    expect(refused.status).toBe(403);
    expect(await errorOf(refused)).toMatchObject({ code: "cap_exceeded", details: { cap: "storage", limit: 300 * MB } });
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "x" } } }), 403, "cap_exceeded");
    expect((await workspace(a.workspaceId)).storage_used).toBe(300 * MB);
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/big.log", { token })).json();
    expect(note.plain_body).toBe("a\nab\n");
  });

  test("a second trial is refused, and so is one on a plan that has the API", async () => {
    h = await harness();
    const a = await h.account("free");
    await startTrialFor(a);
    await expect(startTrialFor(a)).rejects.toBeInstanceOf(AppError);
    await expect(startTrialFor(a)).rejects.toMatchObject({ code: "conflict" });
    // Not after it ended either.
    await endTrial(a);
    await expect(startTrialFor(a)).rejects.toThrow(/already had its API trial/);
    expect((await workspace(a.workspaceId)).state).toBe("trial_ended");

    const dev = await h.account("dev");
    await expect(startTrialFor(dev)).rejects.toMatchObject({ code: "conflict", message: "the dev plan already includes the API" });
    expect(await workspace(dev.workspaceId)).toMatchObject({ state: "active", trial_used: false, trial_ends_at: null });
  });

  test("14 days later the trial has ended: its token still reads, writes answer 403 account_read_only", async () => {
    h = await harness();
    const a = await h.account("free");
    await startTrialFor(a);
    const token = await h.token(a);
    await append(token, "log", "during the trial");
    const note = await create(token, "kept", "body");

    h.clock.advance(14 * DAY - 1);
    expect(await lifecycle()).toEqual({ trialsEnded: 0, trashed: 0 });
    expect((await append(token, "log", "last minute")).status).toBe(200);
    h.clock.advance(1);
    expect(await lifecycle()).toEqual({ trialsEnded: 1, trashed: 0 });
    expect((await account(token)).state).toBe("trial_ended");

    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    expect((await h.request("GET", `/api/v1/notes/${note.id}`, { token })).status).toBe(200);
    const before = { notes: await noteCount(a.workspaceId), storage: (await workspace(a.workspaceId)).storage_used };
    await expectError(await append(token, "log", "after"), 403, "account_read_only");
    await expectError(await append(token, "other.log", "after"), 403, "account_read_only");
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "new" } } }), 403, "account_read_only");
    await expectError(await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes: [{ title: "new" }] } }), 403, "account_read_only");
    await expectError(await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { plain_body: "changed" } } }), 403, "account_read_only");
    await expectError(await h.request("DELETE", `/api/v1/notes/${note.id}`, { token }), 403, "account_read_only");
    expect({ notes: await noteCount(a.workspaceId), storage: (await workspace(a.workspaceId)).storage_used }).toEqual(before);
    const log = await (await h.request("GET", "/api/v1/notes/by-filename/log", { token })).json();
    expect(log.plain_body).toBe("during the trial\nlast minute\n");
    expect((await (await h.request("GET", `/api/v1/notes/${note.id}`, { token })).json()).plain_body).toBe("body");
    // Running the task again changes nothing.
    expect(await lifecycle()).toEqual({ trialsEnded: 0, trashed: 0 });
  });
});

describe("after the trial", () => {
  test("30 days after the trial ended, notes above the free cap go to the trash; the most recently updated stay", async () => {
    h = await harness();
    const { a, token, notes } = await trialWith15Notes();
    // Touching the oldest editable note makes it the most recently updated.
    h.clock.advance(MINUTE);
    expect((await h.request("PATCH", `/api/v1/notes/${notes[1]!.id}`, { token, body: { note: { title: "touched" } } })).status).toBe(200);
    await endTrial(a);

    const due = (await workspace(a.workspaceId)).trash_due_at!;
    expect(due).toBe((await workspace(a.workspaceId)).trial_ends_at! + 30 * DAY);
    h.clock.t = due - 1;
    expect((await lifecycle()).trashed).toBe(0);
    expect(await noteCount(a.workspaceId, isNull(notesTable.trashedAt))).toBe(15);
    h.clock.t = due;
    expect((await lifecycle()).trashed).toBe(5);
    expect(await lifecycle()).toEqual({ trialsEnded: 0, trashed: 0 });

    // Kept: the touched note and the 9 newest; trashed: the stream and notes 2..5.
    const kept = [notes[1]!, ...notes.slice(6)];
    const trashed = [notes[0]!, ...notes.slice(2, 6)];
    const list = await h.request("GET", "/api/v1/notes", { token });
    expect(list.status).toBe(200);
    expect(list.headers.get("x-total-count")).toBe("10");
    const listed: { id: string }[] = await list.json();
    expect(listed.map((n) => n.id).sort()).toEqual(kept.map((n) => n.id).sort());
    expect(listed[0]!.id).toBe(notes[1]!.id);
    for (const n of trashed) await expectError(await h.request("GET", `/api/v1/notes/${n.id}`, { token }), 404, "not_found");
    for (const n of kept) expect((await h.request("GET", `/api/v1/notes/${n.id}`, { token })).status).toBe(200);
    await expectError(await h.request("GET", "/api/v1/notes/by-filename/old.log", { token }), 404, "not_found");
    const streams = await h.request("GET", "/api/v1/notes?kind=stream", { token });
    expect(await streams.json()).toEqual([]);

    // In the trash they count against no note cap, but their bytes stay counted until the purge.
    const keptBytes = kept.reduce((s, n) => s + n.size, 0);
    const totalBytes = notes.reduce((s, n) => s + n.size, 0);
    const acct = await account(token);
    expect(acct.usage).toMatchObject({ notes: 10, plain_notes: 10, storage_bytes: totalBytes });
    const inTrash: { id: string }[] = await (await h.request("GET", "/api/v1/trash", { token })).json();
    expect(inTrash.map((n) => n.id).sort()).toEqual(trashed.map((n) => n.id).sort());

    // The trashed stream gave up its filename: the name is free for a new stream.
    const [row] = await h.deps.db
      .select({ filename: notesTable.filename, trashed_filename: notesTable.trashedFilename })
      .from(notesTable)
      .where(eq(notesTable.id, notes[0]!.id));
    expect(row).toEqual({ filename: null, trashed_filename: "old.log" });
    // Inserted without a unique-filename conflict (a conflict would reject).
    await insertStream(a.workspaceId, "note_newstream", "old.log");

    // 30 days after the trash, the purge deletes them for good and frees their bytes.
    h.clock.advance(30 * DAY);
    await runTask(h.deps, "trash-purge");
    expect(await (await h.request("GET", "/api/v1/trash", { token })).json()).toEqual([]);
    expect(await noteCount(a.workspaceId)).toBe(11);
    expect((await workspace(a.workspaceId)).storage_used).toBe(keptBytes);
  });

  test("a subscription started before the 30 days are up calls off the trash and allows writes again", async () => {
    h = await harness();
    const { a, token, notes } = await trialWith15Notes();
    await endTrial(a);
    await expectError(await append(token, "old.log", "refused"), 403, "account_read_only");

    h.clock.advance(29 * DAY);
    const ws = await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    expect(ws).toMatchObject({ state: "active", plan: "dev", trashDueAt: null });
    h.clock.advance(2 * DAY);
    expect(await lifecycle()).toEqual({ trialsEnded: 0, trashed: 0 });
    expect(await noteCount(a.workspaceId, isNull(notesTable.trashedAt))).toBe(15);

    // The trial's token writes again, now on the Dev plan.
    expect((await append(token, "old.log", "after subscribing")).status).toBe(200);
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "new" } } })).status).toBe(201);
    expect((await h.request("GET", `/api/v1/notes/${notes[2]!.id}`, { token })).status).toBe(200);
    expect(await account(token)).toMatchObject({ plan: "dev", state: "active", usage: { notes: 16 } });
  });

  test("a subscription started after the trash brings the trashed notes back", async () => {
    h = await harness();
    const { a, token, notes } = await trialWith15Notes();
    const totalBytes = notes.reduce((s, n) => s + n.size, 0);
    await endTrial(a);
    h.clock.t = (await workspace(a.workspaceId)).trash_due_at!;
    expect((await lifecycle()).trashed).toBe(5);
    expect((await workspace(a.workspaceId)).storage_used).toBe(totalBytes);

    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    expect(await noteCount(a.workspaceId, isNotNull(notesTable.trashedAt))).toBe(0);
    const list = await h.request("GET", "/api/v1/notes", { token });
    expect(list.headers.get("x-total-count")).toBe("15");
    for (const n of notes) expect((await h.request("GET", `/api/v1/notes/${n.id}`, { token })).status).toBe(200);
    // The stream has its filename back and can be appended to again.
    const stream = await (await h.request("GET", "/api/v1/notes/by-filename/old.log", { token })).json();
    expect(stream).toMatchObject({ id: notes[0]!.id, plain_body: "first line\n" });
    expect((await append(token, "old.log", "back")).status).toBe(200);
    expect(await account(token)).toMatchObject({ state: "active", usage: { notes: 15, storage_bytes: totalBytes + 5 } });
  });

  test("a subscription after the purge brings nothing back: 30 days after the trash the notes are gone", async () => {
    h = await harness();
    const { a, token, notes } = await trialWith15Notes();
    await endTrial(a);
    h.clock.t = (await workspace(a.workspaceId)).trash_due_at!;
    expect((await lifecycle()).trashed).toBe(5);
    h.clock.advance(30 * DAY);
    await runTask(h.deps, "trash-purge");
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    expect(await noteCount(a.workspaceId)).toBe(10);
    await expectError(await h.request("GET", `/api/v1/notes/${notes[0]!.id}`, { token }), 404, "not_found");
    expect((await append(token, "old.log", "a new stream")).status).toBe(201);
  });

  test("a trashed stream whose filename was taken meanwhile comes back without one, reachable by id", async () => {
    h = await harness();
    const { a, token, notes } = await trialWith15Notes();
    await endTrial(a);
    h.clock.t = (await workspace(a.workspaceId)).trash_due_at!;
    await lifecycle();
    await insertStream(a.workspaceId, "note_newstream", "old.log");
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));

    const back = await h.request("GET", `/api/v1/notes/${notes[0]!.id}`, { token });
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ kind: "stream", filename: null, plain_body: "first line\n" });
    expect((await (await h.request("GET", "/api/v1/notes/by-filename/old.log", { token })).json()).id).toBe("note_newstream");
    // "reachable by id": appending to it by id works.
    const appended = await h.request("POST", `/api/v1/notes/${notes[0]!.id}/append`, { token, body: { text: "still here" } });
    expect(appended.status).toBe(200);
    expect(await appended.json()).toMatchObject({ id: notes[0]!.id, filename: null, created: false });
    const after = await (await h.request("GET", `/api/v1/notes/${notes[0]!.id}`, { token })).json();
    expect(after.plain_body).toBe("first line\nstill here\n");
  });

  test("the transitions happen after a restart: the due dates live in the database", async () => {
    h = await harness();
    const { a, token } = await trialWith15Notes();
    const clock = h.clock;

    await h.settle();
    await h.stop();
    h = await harness({ dataDir: h.dataDir, clock });
    expect((await workspace(a.workspaceId)).state).toBe("trial");
    clock.advance(14 * DAY);
    await runAllTasks(h.deps);
    expect((await account(token)).state).toBe("trial_ended");
    await expectError(await append(token, "old.log", "x"), 403, "account_read_only");

    await h.settle();
    await h.stop();
    h = await harness({ dataDir: h.dataDir, clock });
    clock.advance(30 * DAY);
    expect(await lifecycle()).toEqual({ trialsEnded: 0, trashed: 5 });
    expect(await account(token)).toMatchObject({ state: "trial_ended", usage: { notes: 10 } });
    expect((await workspace(a.workspaceId)).trash_due_at).toBeNull();
  });
});

describe("a lapsed subscription", () => {
  test("the extension token answers 401, the API token reads but cannot write, until the account resubscribes", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const stream = await (await append(token, "clips.log", "one")).json();
    const ext = (await h.deps.writer.write(() => mintExtensionToken(h.deps, { ...a, noteId: stream.id }))).token;
    expect((await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext, body: { text: "two" } })).status).toBe(200);

    const ws = await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));
    expect(ws.state).toBe("read_only");
    await expectError(await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext, body: { text: "x" } }), 401, "unauthorized");
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    expect((await account(token)).state).toBe("read_only");
    await expectError(await append(token, "clips.log", "three"), 403, "account_read_only");
    await expectError(await append(token, "new.log", "x"), 403, "account_read_only");
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x" } } }), 403, "account_read_only");
    expect(await noteCount(a.workspaceId)).toBe(1);
    const body = (await (await h.request("GET", "/api/v1/notes/by-filename/clips.log", { token })).json()).plain_body;
    expect(body).toBe("one\ntwo\n");

    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    expect((await append(token, "clips.log", "three")).status).toBe(200);
    expect((await account(token)).state).toBe("active");
    // The revoked extension token stays revoked; a new one can be minted.
    await expectError(await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext, body: { text: "x" } }), 401, "unauthorized");
    const ext2 = (await h.deps.writer.write(() => mintExtensionToken(h.deps, { ...a, noteId: stream.id }))).token;
    expect((await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext2, body: { text: "four" } })).status).toBe(200);
  });

  test("standard profile: reads end 12 months after the last payment with 403 plan_required", async () => {
    h = await harness();
    const a = await h.account("dev");
    const paidAt = h.clock.now();
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev", { paidAt }));
    h.clock.advance(30 * DAY);
    await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));
    h.clock.t = paidAt + 300 * DAY;
    const token = await h.token(a, ["read", "write"], { expiresInDays: 365 });
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);

    const readEnd = Date.parse("2027-11-22T10:00:00Z"); // 12 calendar months after the payment
    h.clock.t = readEnd - 1;
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    h.clock.t = readEnd;
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 403, "plan_required");
    await expectError(await h.request("GET", "/api/v1/account", { token }), 403, "plan_required");
    // A payment brings it back.
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev", { paidAt: h.clock.now() }));
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
  });

  test("alternate profile: a lapsed account still reads after 13 months", async () => {
    h = await harness({ profile: "alternate" });
    const a = await h.account("dev");
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev", { paidAt: h.clock.now() }));
    await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));
    h.clock.t = Date.parse("2027-12-22T10:00:00Z"); // 13 months later
    const token = await h.token(a);
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    expect((await account(token)).state).toBe("read_only");
    await expectError(await append(token, "x.log", "x"), 403, "account_read_only");
  });
});

describe("plan changes", () => {
  test("moving a Dev workspace to Personal revokes its API tokens", async () => {
    h = await harness();
    const a = await h.account("dev");
    const t1 = await h.token(a);
    const t2 = await h.token(a, ["read"]);
    expect((await h.request("GET", "/api/v1/notes", { token: t1 })).status).toBe(200);
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "personal"));
    await expectError(await h.request("GET", "/api/v1/notes", { token: t1 }), 401, "unauthorized");
    await expectError(await h.request("GET", "/api/v1/notes", { token: t2 }), 401, "unauthorized");
    await expect(h.token(a)).rejects.toThrow(/no API access/);
  });
});

describe("the browser-extension token", () => {
  async function devWithStream() {
    const a = await h.account("dev");
    const token = await h.token(a);
    const stream = await (await append(token, "clips.log", "start")).json();
    return { a, token, stream: stream as { id: string } };
  }
  const mintExt = (a: Acct, noteId: string) => h.deps.writer.write(() => mintExtensionToken(h.deps, { ...a, noteId }));

  test("is only for active subscribers", async () => {
    h = await harness();
    const free = await h.account("free");
    await startTrialFor(free);
    const trialToken = await h.token(free);
    const s = await (await append(trialToken, "s.log", "x")).json();
    // Neither a free account nor one in its trial is a subscriber.
    await expect(mintExt(free, s.id)).rejects.toBeInstanceOf(AppError);
    await expect(mintExt(free, s.id)).rejects.toMatchObject({ code: "plan_required" });
    await h.deps.db.update(workspaces).set({ state: "active" }).where(eq(workspaces.id, free.workspaceId));
    await expect(mintExt(free, s.id)).rejects.toThrow(/active subscribers/);

    const { a, stream } = await devWithStream();
    await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));
    await expect(mintExt(a, stream.id)).rejects.toMatchObject({ code: "plan_required", message: "the browser-extension token is for active subscribers" });
    expect((await h.deps.db.select({ n: count() }).from(tokens).where(eq(tokens.kind, "extension")))[0]!.n).toBe(0);
  });

  test("appends to its one stream, 60 a minute; the 61st answers 429 with Retry-After", async () => {
    h = await harness();
    const { a, token, stream } = await devWithStream();
    const ext = (await mintExt(a, stream.id)).token;
    for (let i = 1; i <= 60; i++) {
      const path = i % 2 ? `/api/v1/notes/${stream.id}/append` : "/api/v1/notes/by-filename/clips.log/append";
      const res = await h.request("POST", path, { token: ext, body: { text: `line ${i}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    }
    const limited = await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext, body: { text: "61" } });
    await expectError(limited, 429, "rate_limited");
    const retry = Number(limited.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const body = (await (await h.request("GET", `/api/v1/notes/${stream.id}`, { token })).json()).plain_body as string;
    expect(body.split("\n").filter(Boolean)).toHaveLength(61); // "start" and 60 lines
    // The next minute it appends again.
    h.clock.advance(MINUTE);
    expect((await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext, body: { text: "next minute" } })).status).toBe(200);
  });

  test("cannot read, create or append elsewhere", async () => {
    h = await harness();
    const { a, token, stream } = await devWithStream();
    const other = await create(token, "other");
    await append(token, "other.log", "x");
    const ext = (await mintExt(a, stream.id)).token;
    await expectError(await h.request("GET", `/api/v1/notes/${stream.id}`, { token: ext }), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/notes", { token: ext }), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/account", { token: ext }), 403, "insufficient_scope");
    await expectError(await h.request("POST", "/api/v1/notes", { token: ext, body: { note: { title: "x" } } }), 403, "insufficient_scope");
    await expectError(await h.request("PATCH", `/api/v1/notes/${stream.id}`, { token: ext, body: { note: { title: "x" } } }), 403, "insufficient_scope");
    await expectError(await h.request("DELETE", `/api/v1/notes/${other.id}`, { token: ext }), 403, "insufficient_scope");
    await expectError(await append(ext, "other.log", "x"), 404, "not_found");
    await expectError(await append(ext, "brand-new.log", "x"), 404, "not_found");
    expect(await noteCount(a.workspaceId)).toBe(3);
  });

  test("is outside the Dev cap of 3 API tokens, and a second one revokes the first", async () => {
    h = await harness();
    const { a, token, stream } = await devWithStream();
    const first = (await mintExt(a, stream.id)).token;
    // With the extension token active, two more API tokens still fit under the cap of 3.
    await h.token(a);
    await h.token(a);
    await expect(h.token(a)).rejects.toThrow(/allows 3 active API tokens/);
    expect((await account(token)).usage.active_tokens).toBe(3);
    expect((await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: first, body: { text: "a" } })).status).toBe(200);

    const second = (await mintExt(a, stream.id)).token;
    await expectError(await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: first, body: { text: "b" } }), 401, "unauthorized");
    expect((await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: second, body: { text: "c" } })).status).toBe(200);
    const active = await h.deps.db
      .select({ kind: tokens.kind, n: count() })
      .from(tokens)
      .where(isNull(tokens.revokedAt))
      .groupBy(tokens.kind)
      .orderBy(asc(tokens.kind));
    expect(active).toEqual([{ kind: "api", n: 3 }, { kind: "extension", n: 1 }]);
    const body = (await (await h.request("GET", `/api/v1/notes/${stream.id}`, { token })).json()).plain_body;
    expect(body).toBe("start\na\nc\n");
  });

  test("a Personal subscriber's extension token appends (the plan has no API, but the token is the extension's)", async () => {
    h = await harness();
    const { a, stream } = await devWithStream();
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "personal"));
    const ext = (await mintExt(a, stream.id)).token;
    const res = await h.request("POST", `/api/v1/notes/${stream.id}/append`, { token: ext, body: { text: "from the browser" } });
    expect(res.status).toBe(200);
  });
});
