import { afterEach, describe, expect, test } from "bun:test";
import { count, eq, inArray, sql } from "drizzle-orm";
import { idempotencyKeys, notes, workspaces } from "../../src/db/tables";
import { sqlRun } from "../../src/db/sql";
import { runAllTasks } from "../../src/schedule";
import { errorOf, harness, onPostgres, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const DAY = 24 * 60 * 60 * 1000;
const withKey = (key: string) => ({ "idempotency-key": key });
const countNotes = async () => (await h.deps.db.select({ n: count() }).from(notes))[0]!.n;

describe("Idempotency-Key", () => {
  test("a repeat replays the stored answer with Idempotent-Replay and writes nothing again", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const body = { note: { title: "once" } };
    const first = await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("k-1") });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replay")).toBeNull();
    const created = await first.json();
    const again = await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("k-1") });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(await again.json()).toEqual(created);
    expect(await countNotes()).toBe(1);
  });

  test("appends are replayed too: one line, the same 201 created answer", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const send = () => h.request("POST", "/api/v1/notes/by-filename/pay.log/append", { token, body: { text: "charge 42" }, headers: withKey("evt_1") });
    const a = await send();
    const b = await send();
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(await b.json()).toEqual(await a.json());
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/pay.log", { token })).json();
    expect(note.plain_body).toBe("charge 42\n");
  });

  test("the same key with another body, path or method is 422 idempotency_key_reused", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "a" } }, headers: withKey("k") })).json();
    for (const [method, path, body] of [
      ["POST", "/api/v1/notes", { note: { title: "b" } }],
      ["POST", "/api/v1/folders", { folder: { name: "x" } }],
      ["PATCH", `/api/v1/notes/${id}`, { note: { title: "a" } }],
    ] as const) {
      const res = await h.request(method, path, { token, body, headers: withKey("k") });
      expect(res.status).toBe(422);
      expect((await errorOf(res)).code).toBe("idempotency_key_reused");
    }
    expect(await countNotes()).toBe(1);
  });

  test("two concurrent requests with one key create one note; the other is 409 in progress", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const body = { note: { title: "race" } };
    const [a, b] = await Promise.all([
      h.request("POST", "/api/v1/notes", { token, body, headers: withKey("race") }),
      h.request("POST", "/api/v1/notes", { token, body, headers: withKey("race") }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const conflict = a.status === 409 ? a : b;
    expect((await errorOf(conflict)).code).toBe("idempotency_in_progress");
    expect(await countNotes()).toBe(1);
    // Once done, the key replays.
    const c = await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("race") });
    expect(c.headers.get("idempotent-replay")).toBe("true");
  });

  test("keys are per token: another workspace's key is another key", async () => {
    h = await harness();
    const alice = await h.token(await h.account("dev"));
    const bob = await h.token(await h.account("dev"));
    const body = { note: { title: "t" } };
    const a = await h.request("POST", "/api/v1/notes", { token: alice, body, headers: withKey("shared") });
    const b = await h.request("POST", "/api/v1/notes", { token: bob, body, headers: withKey("shared") });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotent-replay")).toBeNull();
    expect((await a.json()).id).not.toBe((await b.json()).id);
  });

  test("a weaker token of the same workspace never gets another token's stored answer", async () => {
    h = await harness();
    const owner = await h.account("dev");
    const writer = await h.token(owner, ["read", "write"]);
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token: writer, body: { text: "x" } })).json();
    const other = await (await h.request("POST", "/api/v1/notes", { token: writer, body: { note: { title: "o" } } })).json();
    const patch = { note: { webhook_url: "https://hooks.example.com/x" } };
    h.deps.resolve = async () => [{ address: "93.184.216.34", family: 4 }];
    const stored = await h.request("PATCH", `/api/v1/notes/${id}`, { token: writer, body: patch, headers: withKey("k") });
    expect(stored.status).toBe(200);
    expect((await stored.json()).webhook_secret).toMatch(/^whsec_/);
    const rotated = await h.request("POST", `/api/v1/notes/${id}/inbox`, { token: writer, headers: withKey("inbox") });
    expect(rotated.status).toBe(201);

    const appendOnly = await h.token(owner, ["append"]);
    const pinnedElsewhere = await h.token(owner, ["read", "write"], { noteId: other.id });
    for (const weak of [appendOnly, pinnedElsewhere]) {
      const replay = await h.request("PATCH", `/api/v1/notes/${id}`, { token: weak, body: patch, headers: withKey("k") });
      expect(replay.headers.get("idempotent-replay")).toBeNull();
      expect(replay.status).toBe(weak === appendOnly ? 403 : 404);
      expect(await replay.text()).not.toContain("whsec_");
      const inbox = await h.request("POST", `/api/v1/notes/${id}/inbox`, { token: weak, headers: withKey("inbox") });
      expect(inbox.headers.get("idempotent-replay")).toBeNull();
      expect(await inbox.text()).not.toContain("inb_");
    }
  });

  test("a weak token's refusal is not stored: the real writer's request under the same key runs", async () => {
    h = await harness();
    const owner = await h.account("dev");
    const weak = await h.token(owner, ["read"]);
    const writer = await h.token(owner, ["read", "write"]);
    const body = { note: { title: "mine" } };
    const refused = await h.request("POST", "/api/v1/notes", { token: weak, body, headers: withKey("first") });
    expect(refused.status).toBe(403);
    const again = await h.request("POST", "/api/v1/notes", { token: weak, body, headers: withKey("first") });
    expect(again.headers.get("idempotent-replay")).toBeNull();
    const real = await h.request("POST", "/api/v1/notes", { token: writer, body, headers: withKey("first") });
    expect(real.status).toBe(201);
    expect(real.headers.get("idempotent-replay")).toBeNull();
    expect(await countNotes()).toBe(1);
    expect((await h.deps.db.select({ n: count() }).from(idempotencyKeys).where(inArray(idempotencyKeys.status, [401, 403, 429])))[0]!.n).toBe(0);
  });

  test("a stored answer is not replayed once the account is read-only", async () => {
    h = await harness();
    const owner = await h.account("dev");
    const token = await h.token(owner);
    const body = { note: { title: "before" } };
    expect((await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("k") })).status).toBe(201);
    await h.deps.db.update(workspaces).set({ state: "read_only", lapsedAt: h.clock.now() }).where(eq(workspaces.id, owner.workspaceId));
    h.deps.tokens.clear();
    const replay = await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("k") });
    expect(replay.status).toBe(403);
    expect((await errorOf(replay)).code).toBe("account_read_only");
  });

  test("a key longer than 255 characters is 400; 255 is fine", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const long = await h.request("POST", "/api/v1/notes", { token, body: { note: {} }, headers: withKey("k".repeat(256)) });
    expect(long.status).toBe(400);
    expect((await errorOf(long)).code).toBe("bad_request");
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: {} }, headers: withKey("k".repeat(255)) })).status).toBe(201);
    expect(await countNotes()).toBe(1);
  });

  test("4xx answers are stored and replayed; the key then stays bound to that request", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const bad = { note: { title: "x".repeat(201) } };
    const first = await h.request("POST", "/api/v1/notes", { token, body: bad, headers: withKey("bad") });
    expect(first.status).toBe(422);
    const again = await h.request("POST", "/api/v1/notes", { token, body: bad, headers: withKey("bad") });
    expect(again.status).toBe(422);
    expect(again.headers.get("idempotent-replay")).toBe("true");
  });

  test("5xx answers are not stored: a retry runs again", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).json();
    await sqlRun(h.deps.store, sql`ALTER TABLE snapshots RENAME TO snapshots_away`);
    const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "new" } }, headers: withKey("flaky") });
    expect(res.status).toBe(500);
    await sqlRun(h.deps.store, sql`ALTER TABLE snapshots_away RENAME TO snapshots`);
    const retry = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "new" } }, headers: withKey("flaky") });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replay")).toBeNull();
    expect((await retry.json()).title).toBe("new");
  });

  test("replays survive a restart", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const body = { note: { title: "durable" } };
    const first = await (await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("restart") })).json();
    await h.stop();
    h = await harness({ dataDir: h.dataDir, clock: h.clock });
    const again = await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("restart") });
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect((await again.json()).id).toBe(first.id);
    expect(await countNotes()).toBe(1);
  });

  test("after 24 hours the key is forgotten, and the periodic job purges it", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const body = { note: { title: "t" } };
    await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("old") });
    h.clock.advance(DAY + 1000);
    const later = await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("old") });
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replay")).toBeNull();
    expect(await countNotes()).toBe(2);
    await h.request("POST", "/api/v1/notes", { token, body, headers: withKey("other") });
    h.clock.advance(DAY + 1000);
    await runAllTasks(h.deps);
    expect((await h.deps.db.select({ n: count() }).from(idempotencyKeys))[0]!.n).toBe(0);
  });

  test("the write and its stored answer commit together", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    // Make the idempotency record fail to store: the note must not be created either.
    // A trigger that refuses (on PostgreSQL a function and a trigger).
    if (onPostgres) {
      await sqlRun(h.deps.store, "CREATE FUNCTION no_keys() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$");
      await sqlRun(h.deps.store, "CREATE TRIGGER no_keys BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION no_keys()");
    } else {
      await sqlRun(h.deps.store, "CREATE TRIGGER no_keys BEFORE INSERT ON idempotency_keys BEGIN SELECT RAISE(ABORT, 'refused'); END");
    }
    const res = await h.request("POST", "/api/v1/notes", { token, body: { note: {} }, headers: withKey("atomic") });
    expect(res.status).toBe(500);
    expect(await countNotes()).toBe(0);
  });
});
