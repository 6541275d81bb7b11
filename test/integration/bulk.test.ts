import { afterEach, describe, expect, test } from "bun:test";
import { count } from "drizzle-orm";
import { notes } from "../../src/db/tables";
import { newNoteRow } from "../../src/modules/notes/repo";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

async function countNotes(): Promise<number> {
  const [counted] = await h.deps.db.select({ n: count() }).from(notes);
  return counted!.n;
}
const bulk = (token: string, notes: unknown[]) => h.request("POST", "/api/v1/notes/bulk", { token, body: { notes } });

describe("bulk create", () => {
  test("50 notes in one request: 201 with the records, in order", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const notes = Array.from({ length: 50 }, (_, i) => ({ title: `n${i}`, plain_body: `body ${i}` }));
    const res = await bulk(token, notes);
    expect(res.status).toBe(201);
    const records = await res.json();
    expect(records).toHaveLength(50);
    expect(records.map((r: { title: string }) => r.title)).toEqual(notes.map((n) => n.title));
    expect(records[7]).toMatchObject({ kind: "editable", format: "plain", plain_body: "body 7" });
    expect(await countNotes()).toBe(50);
    const account = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(account.usage.storage_bytes).toBe(notes.reduce((n, x) => n + x.plain_body.length, 0));
  });

  test("one bad title among 50 creates nothing; details name the index and field", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const notes = Array.from({ length: 50 }, (_, i) => ({ title: i === 31 ? "x".repeat(201) : `n${i}` }));
    const res = await bulk(token, notes);
    expect(res.status).toBe(422);
    const err = await errorOf(res);
    expect(err.code).toBe("validation_failed");
    expect(err.details).toEqual([{ index: 31, field: "notes.31.title", code: "too_long", message: expect.any(String) }]);
    expect(await countNotes()).toBe(0);
  });

  test("a foreign folder in one note fails the batch with that note's index", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const other = await h.token(await h.account("dev"));
    const [foreign] = await (await h.request("GET", "/api/v1/folders", { token: other })).json();
    const res = await bulk(token, [{ title: "a" }, { title: "b", folder_id: foreign.id }]);
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ index: 1, field: "notes.1.folder_id", code: "not_found" });
    expect(await countNotes()).toBe(0);
  });

  test("an empty or malformed folder id fails the batch with that note's index, never a 500", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const empty = await bulk(token, [{ title: "a" }, { title: "", plain_body: "", folder_id: "" }]);
    expect(empty.status).toBe(422);
    expect((await errorOf(empty)).details).toEqual([{ index: 1, field: "notes.1.folder_id", code: "invalid", message: expect.any(String) }]);
    const res = await bulk(token, [{ title: "a" }, { title: "", plain_body: "", folder_id: "" }, { title: "c", folder_id: "fold_\u0007" }]);
    expect(res.status).toBe(422);
    const err = await errorOf(res);
    expect(err.code).toBe("validation_failed");
    expect(err.details).toEqual([
      { index: 1, field: "notes.1.folder_id", code: "invalid", message: expect.any(String) },
      { index: 2, field: "notes.2.folder_id", code: "invalid", message: expect.any(String) },
    ]);
    expect(await countNotes()).toBe(0);
  });

  test("0 or 51 notes are refused", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    for (const n of [0, 51]) {
      const res = await bulk(token, Array.from({ length: n }, () => ({})));
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details[0].field).toBe("notes");
    }
  });

  test("caps are checked for the whole batch: 10 when 5 slots are left creates nothing", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const seed = Array.from({ length: 9_995 }, (_, i) => newNoteRow({ id: `note_seed_${i}`, workspaceId: a.workspaceId, kind: "editable", title: "t", body: "" }, 0));
    // In statements of 500 rows: each row is some 30 parameters, and a statement takes a bounded number.
    for (let i = 0; i < seed.length; i += 500) await h.deps.db.insert(notes).values(seed.slice(i, i + 500));
    const res = await bulk(token, Array.from({ length: 10 }, () => ({})));
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toMatchObject({ code: "cap_exceeded", details: { cap: "notes", limit: 10_000, used: 9_995 } });
    expect(await countNotes()).toBe(9_995);
    expect((await bulk(token, Array.from({ length: 5 }, () => ({})))).status).toBe(201);
  });

  test("in the alternate profile only Dev-pro may bulk create", async () => {
    h = await harness({ profile: "alternate" });
    const dev = await h.token(await h.account("dev"));
    const res = await bulk(dev, [{}]);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe("plan_required");
    const pro = await h.token(await h.account("dev_pro"));
    expect((await bulk(pro, [{}])).status).toBe(201);
  });
});
