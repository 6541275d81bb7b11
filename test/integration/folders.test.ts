import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

describe("folders", () => {
  let token: string;
  beforeEach(async () => {
    h = await harness();
    token = await h.token(await h.account("dev"));
  });

  test("three folders are seeded at signup", async () => {
    const res = await h.request("GET", "/api/v1/folders", { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("3");
    const names = (await res.json()).map((f: { name: string }) => f.name).sort();
    expect(names).toEqual(["Archive", "Inbox", "Projects"]);
  });

  test("create (201), rename, delete; names are unique without regard to case (409)", async () => {
    const created = await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Deploys" } } });
    expect(created.status).toBe(201);
    const f = await created.json();
    expect(f).toMatchObject({ name: "Deploys", note_count: 0 });
    expect(f.id).toStartWith("fold_");

    const dup = await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "dEPLOYS" } } });
    expect(dup.status).toBe(409);
    expect((await errorOf(dup)).code).toBe("conflict");

    const renamed = await h.request("PATCH", `/api/v1/folders/${f.id}`, { token, body: { folder: { name: "Releases" } } });
    expect(renamed.status).toBe(200);
    expect((await renamed.json()).name).toBe("Releases");
    // Renaming to another case of its own name is fine; to another folder's name is not.
    expect((await h.request("PATCH", `/api/v1/folders/${f.id}`, { token, body: { folder: { name: "RELEASES" } } })).status).toBe(200);
    expect((await h.request("PATCH", `/api/v1/folders/${f.id}`, { token, body: { folder: { name: "inbox" } } })).status).toBe(409);

    const del = await h.request("DELETE", `/api/v1/folders/${f.id}`, { token });
    expect(await del.json()).toEqual({ id: f.id, deleted: true });
    expect((await h.request("DELETE", `/api/v1/folders/${f.id}`, { token })).status).toBe(404);
  });

  test("names: 1 to 80 characters after stripping control characters and trimming", async () => {
    for (const [name, code] of [["", "blank"], ["  \u0000 ", "blank"], ["x".repeat(81), "too_long"]] as const) {
      const res = await h.request("POST", "/api/v1/folders", { token, body: { folder: { name } } });
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details[0]).toMatchObject({ field: "folder.name", code });
    }
    const ok = await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: " a\nb " + "ü".repeat(77) } } });
    expect(ok.status).toBe(201);
    expect((await ok.json()).name).toBe("ab " + "ü".repeat(77));
  });

  test("deleting a folder keeps its notes, unfiled", async () => {
    const f = await (await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Tmp" } } })).json();
    const note = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "kept", folder_id: f.id } } })).json();
    const listed = await (await h.request("GET", "/api/v1/folders", { token })).json();
    expect(listed.find((x: { id: string }) => x.id === f.id).note_count).toBe(1);
    await h.request("DELETE", `/api/v1/folders/${f.id}`, { token });
    const after = await (await h.request("GET", `/api/v1/notes/${note.id}`, { token })).json();
    expect(after).toMatchObject({ title: "kept", folder_id: null });
  });

  test("another workspace's folder is 404", async () => {
    const other = await h.token(await h.account("dev"));
    const [f] = await (await h.request("GET", "/api/v1/folders", { token: other })).json();
    expect((await h.request("PATCH", `/api/v1/folders/${f.id}`, { token, body: { folder: { name: "x" } } })).status).toBe(404);
    expect((await h.request("DELETE", `/api/v1/folders/${f.id}`, { token })).status).toBe(404);
  });

  test("a pinned token cannot manage folders", async () => {
    const a = await h.account("dev");
    const t = await h.token(a);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token: t, body: { note: {} } })).json();
    const pinned = await h.token(a, ["read", "write"], { noteId: id });
    const res = await h.request("POST", "/api/v1/folders", { token: pinned, body: { folder: { name: "x" } } });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe("insufficient_scope");
  });
});

test("one folder is seeded in the alternate profile", async () => {
  h = await harness({ profile: "alternate" });
  const token = await h.token(await h.account("dev"));
  expect((await (await h.request("GET", "/api/v1/folders", { token })).json()).map((f: { name: string }) => f.name)).toEqual(["Inbox"]);
});

test("a token pinned to one note lists no folders, reads no account, and sees only its note's errors", async () => {
  h = await harness();
  const a = await h.account("dev");
  const full = await h.token(a);
  const mine = await (await h.request("POST", "/api/v1/notes/by-filename/mine.log/append", { token: full, body: { text: "x" } })).json();
  await h.request("POST", "/api/v1/folders", { token: full, body: { folder: { name: "Secret project" } } });
  // Other tokens' errors elsewhere in the workspace: paths and token ids a pinned token must not see.
  await h.request("GET", "/api/v1/notes/by-filename/payroll-2026.log", { token: full });
  await h.request("POST", `/api/v1/notes/${mine.id}/append`, { token: full, body: {} });
  const pinned = await h.token(a, ["read", "write"], { noteId: mine.id });
  await h.request("GET", "/api/v1/notes/note_elsewhere", { token: pinned });
  await h.settle();

  for (const path of ["/api/v1/folders", "/api/v1/account"]) {
    const res = await h.request("GET", path, { token: pinned });
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe("insufficient_scope");
    expect(text).not.toContain("Secret project");
  }
  await h.settle();
  const res = await h.request("GET", "/api/v1/errors", { token: pinned });
  expect(res.status).toBe(200);
  const errors = (await res.json()) as { path: string; token_id: string | null }[];
  expect(JSON.stringify(errors)).not.toContain("payroll");
  expect(errors.map((e) => e.path).sort()).toEqual(["/api/v1/account", "/api/v1/folders", `/api/v1/notes/${mine.id}/append`, "/api/v1/notes/note_elsewhere"].sort());
  // Its own errors name its own token; the other token's error on its note names none.
  expect(errors.find((e) => e.path.endsWith("/append"))!.token_id).toBeNull();
  expect(errors.filter((e) => e.token_id !== null).length).toBe(3);
  // An unpinned token of the workspace still sees everything.
  expect(((await (await h.request("GET", "/api/v1/errors", { token: full })).json()) as unknown[]).length).toBe(5);
});
