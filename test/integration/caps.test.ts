import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { notes, workspaces } from "../../src/db/tables";
import { runTask } from "../../src/schedule";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const MB = 1024 * 1024;

/** Fills a workspace with `n` notes of a format straight in the table, as if created earlier. */
async function seedNotes(ws: string, n: number, format: "plain" | "rich") {
  const row = (i: number) => ({
    id: `note_seed_${format}_${i}`,
    workspaceId: ws,
    kind: "editable" as const,
    format,
    title: "t",
    body: "",
    byteSize: 0,
    createdAt: 0,
    updatedAt: 0,
    lastWriteAt: 0,
  });
  // A few hundred rows a statement: both databases cap the parameters of one.
  for (let from = 0; from < n; from += 500) {
    await h.deps.db.insert(notes).values(Array.from({ length: Math.min(500, n - from) }, (_, k) => row(from + k)));
  }
}

const setStorageUsed = async (workspaceId: string, storageUsed: number) => {
  await h.deps.db.update(workspaces).set({ storageUsed }).where(eq(workspaces.id, workspaceId));
};

async function expectCap(res: TestResponse, cap: string, limit: number) {
  expect(res.status).toBe(403);
  const err = await errorOf(res);
  expect(err.code).toBe("cap_exceeded");
  expect(err.details).toMatchObject({ cap, limit });
  expect(typeof err.details.used).toBe("number");
  return err;
}

describe("note caps", () => {
  test("Dev: the 10,001st plain note is refused, rich notes are counted apart; nothing is written", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    await seedNotes(a.workspaceId, 9_999, "plain");
    await seedNotes(a.workspaceId, 1_000, "rich");
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).status).toBe(201);
    const err = await expectCap(await h.request("POST", "/api/v1/notes", { token, body: { note: {} } }), "notes", 10_000);
    expect(err.details.used).toBe(10_000);
    await expectCap(await h.request("POST", "/api/v1/notes/by-filename/new.log/append", { token, body: { text: "x" } }), "notes", 10_000);
    expect((await h.request("GET", "/api/v1/notes/by-filename/new.log", { token })).status).toBe(404);
    // Appending to an existing stream is not a new note and is not refused.
    await h.deps.db.delete(notes).where(eq(notes.id, "note_seed_plain_0"));
    expect((await h.request("POST", "/api/v1/notes/by-filename/new.log/append", { token, body: { text: "x" } })).status).toBe(201);
    expect((await h.request("POST", "/api/v1/notes/by-filename/new.log/append", { token, body: { text: "y" } })).status).toBe(200);
  });

  test("deleting a note frees its slot", async () => {
    h = await harness({ profile: "alternate" });
    const a = await h.account("dev");
    const token = await h.token(a);
    await seedNotes(a.workspaceId, 10_000, "plain");
    await expectCap(await h.request("POST", "/api/v1/notes", { token, body: { note: {} } }), "notes", 10_000);
    expect((await h.request("DELETE", "/api/v1/notes/note_seed_plain_5", { token })).status).toBe(200);
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).status).toBe(201);
  });

  test("a plan whose notes are shared counts rich and plain together (the trial's 100)", async () => {
    h = await harness();
    const a = await h.account("free");
    // Free has no API of its own; the trial opens it with an allotment of 100 notes, rich and plain together.
    await h.deps.db.update(workspaces).set({ state: "trial", trialEndsAt: h.clock.now() + 86_400_000 }).where(eq(workspaces.id, a.workspaceId));
    const token = await h.token(a);
    await seedNotes(a.workspaceId, 50, "rich");
    await seedNotes(a.workspaceId, 50, "plain");
    await expectCap(await h.request("POST", "/api/v1/notes", { token, body: { note: {} } }), "notes", 100);
  });
});

describe("storage cap", () => {
  test("a write that would pass the workspace's storage is 403 cap_exceeded and writes nothing", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const cap = 15 * 1024 ** 3;
    const first = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "abc" } })).json();
    await setStorageUsed(a.workspaceId, cap - 10);
    const err = await expectCap(await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "0123456789" } }), "storage", cap);
    expect(err.details.used).toBe(cap - 10);
    await expectCap(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "0123456789a" } } }), "storage", cap);
    // Exactly filling it is fine.
    const ok = await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "012345678" } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ storage_used: cap, storage_cap: cap, byte_size: first.byte_size + 10 });
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/s.log", { token })).json();
    expect(note.plain_body).toBe("abc\n012345678\n");
  });

  test("concurrent appends in one writer batch are counted against storage one after another", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const cap = 15 * 1024 ** 3;
    await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "abc" } });
    // Room for exactly three 10-byte lines ("012345678\n"), asked for by ten requests at once.
    await setStorageUsed(a.workspaceId, cap - 30);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "012345678" } })),
    );
    const ok = answers.filter((r) => r.status === 200);
    expect(ok.length).toBe(3);
    expect(answers.filter((r) => r.status === 403).length).toBe(7);
    const used = (await Promise.all(ok.map((r) => r.json()))).map((b) => b.storage_used).sort();
    expect(used).toEqual([cap - 20, cap - 10, cap]);
    for (const refused of answers.filter((r) => r.status === 403)) expect((await errorOf(refused)).details.used).toBe(cap);
    const [row] = await h.deps.db.select({ storageUsed: workspaces.storageUsed }).from(workspaces).where(eq(workspaces.id, a.workspaceId));
    expect(row!.storageUsed).toBe(cap);
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/s.log", { token })).json();
    expect(note.plain_body).toBe("abc\n" + "012345678\n".repeat(3));
  });

  test("shrinking an editable note frees storage; deleting frees all of it when the trash is purged", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "x".repeat(1000) } } })).json();
    const usage = async () => (await (await h.request("GET", "/api/v1/account", { token })).json()).usage.storage_bytes;
    expect(await usage()).toBe(1000);
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body: "x".repeat(10) } } });
    expect(await usage()).toBe(10);
    await h.request("DELETE", `/api/v1/notes/${id}`, { token });
    expect(await usage()).toBe(10);
    h.clock.advance(30 * 86_400_000);
    await runTask(h.deps, "trash-purge");
    expect(await usage()).toBe(0);
  });
});

describe("per-note size cap", () => {
  test("Dev streams stop at 3 MB: the append that would pass it is refused, the stream is intact", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const block = "x".repeat(MB - 1); // plus the added LF = exactly 1 MB
    for (let i = 0; i < 3; i++) expect((await h.request("POST", "/api/v1/notes/by-filename/big/append", { token, body: { text: block } })).status).toBeLessThan(300);
    const full = await (await h.request("GET", "/api/v1/notes/by-filename/big", { token })).json();
    expect(full.byte_size).toBe(3 * MB);
    const err = await expectCap(await h.request("POST", "/api/v1/notes/by-filename/big/append", { token, body: { text: "1" } }), "note_size", 3 * MB);
    expect(err.details.used).toBe(3 * MB);
    expect((await (await h.request("GET", "/api/v1/notes/by-filename/big", { token })).json()).byte_size).toBe(3 * MB);
  });

  test("an editable body over the plan's cap is refused on create and on update", async () => {
    h = await harness({ profile: "alternate" });
    const token = await h.token(await h.account("dev"));
    const cap = 1.5 * MB;
    await expectCap(await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "x".repeat(cap + 1) } } }), "note_size", cap);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { plain_body: "x".repeat(cap) } } })).json();
    await expectCap(await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body: "é".repeat(cap / 2 + 1) } } }), "note_size", cap);
  });

  test("a first append too large for a note creates nothing", async () => {
    h = await harness({ profile: "alternate" });
    const token = await h.token(await h.account("dev"));
    await expectCap(await h.request("POST", "/api/v1/notes/by-filename/huge/append", { token, body: { text: "x".repeat(1.5 * MB) } }), "note_size", 1.5 * MB);
    expect((await h.request("GET", "/api/v1/notes/by-filename/huge", { token })).status).toBe(404);
  });
});

describe("folder and profile caps", () => {
  test("the 101st folder is refused", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    for (let i = 3; i < 100; i++) {
      if (i % 50 === 0) h.clock.advance(60_000); // stay under the Dev write rate
      expect((await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: `f${i}` } } })).status).toBe(201);
    }
    await expectCap(await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "one too many" } } }), "folders", 100);
  });

  test("the unlimited profile has no caps: append answers null caps, big notes and many tokens are fine", async () => {
    h = await harness({ profile: "unlimited" });
    const a = await h.account("free");
    for (let i = 0; i < 5; i++) await h.token(a);
    const token = await h.token(a);
    const res = await h.request("POST", "/api/v1/notes/by-filename/x/append", { token, body: { text: "x".repeat(3 * MB + 10) } });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ bytes_remaining: null, storage_cap: null });
    const account = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(account.caps).toMatchObject({ notes: null, storage_bytes: null, active_tokens: null, folders: null });
  });
});
