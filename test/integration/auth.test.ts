import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, tokens, workspaces } from "../../src/db/tables";
import { revokeToken } from "../../src/modules/tokens/service";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(() => h.close());

async function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect((await errorOf(res)).code).toBe(code);
}

describe("authentication", () => {
  test("a missing, malformed or unknown token is 401 with WWW-Authenticate", async () => {
    for (const headers of [{} as Record<string, string>, { authorization: "Basic abc" }, { authorization: "Bearer nst_unknown" }, { authorization: "Bearer other" }]) {
      const res = await h.request("GET", "/api/v1/notes", { headers });
      await expectError(res, 401, "unauthorized");
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
    }
  });

  test("tokens look like nst_ plus at least 32 base62 characters and are stored only as SHA-256", async () => {
    const token = await h.token(await h.account("dev"));
    expect(token).toMatch(/^nst_[0-9A-Za-z]{32,}$/);
    const rows = await h.deps.db.select().from(tokens);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0]!.tokenHash).toBe(new Bun.CryptoHasher("sha256").update(token).digest("hex"));
  });

  test("an expired token is 401; it works until then", async () => {
    const token = await h.token(await h.account("dev"), ["read"], { expiresInDays: 1 });
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    h.clock.advance(24 * 3600 * 1000);
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 401, "unauthorized");
  });

  test("the default expiry is 90 days and the longest is one year", async () => {
    const a = await h.account("dev");
    await h.token(a);
    const [row] = await h.deps.db.select({ expiresAt: tokens.expiresAt, createdAt: tokens.createdAt }).from(tokens).limit(1);
    expect(row!.expiresAt - row!.createdAt).toBe(90 * 24 * 3600 * 1000);
    await expect(h.token(a, ["read"], { expiresInDays: 366 })).rejects.toThrow(/365/);
  });

  test("a revoked token is 401", async () => {
    const a = await h.account("dev");
    const token = await h.token(a);
    const id = (await h.deps.db.select({ id: tokens.id }).from(tokens).limit(1))[0]!.id;
    await h.deps.writer.write(() => revokeToken(h.deps, id));
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 401, "unauthorized");
  });

  test("a token in the cache is 401 on the next request once revoked, on the append fast path too", async () => {
    const a = await h.account("dev");
    const token = await h.token(a);
    expect((await h.request("POST", "/api/v1/notes/by-filename/c.log/append", { token, body: { text: "one" } })).status).toBe(201);
    expect((await h.request("POST", "/api/v1/notes/by-filename/c.log/append", { token, body: { text: "two" } })).status).toBe(200);
    const id = (await h.deps.db.select({ id: tokens.id }).from(tokens).limit(1))[0]!.id;
    await h.deps.writer.write(() => revokeToken(h.deps, id));
    await expectError(await h.request("POST", "/api/v1/notes/by-filename/c.log/append", { token, body: { text: "three" } }), 401, "unauthorized");
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 401, "unauthorized");
  });

  test("Free and Personal plans get no tokens; Dev gets 3 active, Team 30", async () => {
    for (const plan of ["free", "personal"] as const) {
      const a = await h.account(plan);
      await expect(h.token(a)).rejects.toThrow(/no API access/);
    }
    const dev = await h.account("dev");
    for (let i = 0; i < 3; i++) await h.token(dev);
    await expect(h.token(dev)).rejects.toThrow(/allows 3 active API tokens/);
    // Revoking one frees a slot.
    const id = (await h.deps.db.select({ id: tokens.id }).from(tokens).limit(1))[0]!.id;
    await h.deps.writer.write(() => revokeToken(h.deps, id));
    await h.token(dev);
  });

  test("a token of a workspace that lost API access (plan changed to free) is 403 plan_required", async () => {
    const a = await h.account("dev");
    const token = await h.token(a);
    await h.deps.db.update(workspaces).set({ plan: "free" }).where(eq(workspaces.id, a.workspaceId));
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 403, "plan_required");
  });
});

describe("scopes", () => {
  test("a read token cannot write, append, create folders or delete", async () => {
    const a = await h.account("dev");
    const writer = await h.token(a, ["write"]);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token: writer, body: { note: { title: "t" } } })).json();
    const reader = await h.token(a, ["read"]);
    await expectError(await h.request("POST", "/api/v1/notes", { token: reader, body: { note: {} } }), 403, "insufficient_scope");
    await expectError(await h.request("PATCH", `/api/v1/notes/${id}`, { token: reader, body: { note: { title: "x" } } }), 403, "insufficient_scope");
    await expectError(await h.request("DELETE", `/api/v1/notes/${id}`, { token: reader }), 403, "insufficient_scope");
    await expectError(await h.request("POST", "/api/v1/notes/by-filename/a/append", { token: reader, body: { text: "x" } }), 403, "insufficient_scope");
    await expectError(await h.request("POST", "/api/v1/folders", { token: reader, body: { folder: { name: "x" } } }), 403, "insufficient_scope");
    expect((await h.request("GET", `/api/v1/notes/${id}`, { token: reader })).status).toBe(200);
  });

  test("a write-only token writes and appends but cannot read", async () => {
    const token = await h.token(await h.account("dev"), ["write"]);
    expect((await h.request("POST", "/api/v1/notes/by-filename/a/append", { token, body: { text: "x" } })).status).toBe(201);
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/notes/by-filename/a", { token }), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/account", { token }), 403, "insufficient_scope");
  });

  test("an append-only token appends (and creates streams) but can do nothing else", async () => {
    const a = await h.account("dev");
    const full = await h.token(a, ["read", "write"]);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token: full, body: { note: {} } })).json();
    const token = await h.token(a, ["append"]);
    expect((await h.request("POST", "/api/v1/notes/by-filename/a/append", { token, body: { text: "x" } })).status).toBe(201);
    await expectError(await h.request("GET", "/api/v1/notes", { token }), 403, "insufficient_scope");
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: {} } }), 403, "insufficient_scope");
    await expectError(await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "x" } } }), 403, "insufficient_scope");
    await expectError(await h.request("DELETE", `/api/v1/notes/${id}`, { token }), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/folders", { token }), 403, "insufficient_scope");
  });
});

describe("ownership", () => {
  test("another workspace's note id answers 404 exactly like a missing one", async () => {
    const alice = await h.token(await h.account("dev"));
    const bob = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes", { token: alice, body: { note: { title: "secret" } } })).json();
    const missing = await h.request("GET", "/api/v1/notes/note_doesnotexist", { token: bob });
    const foreign = await h.request("GET", `/api/v1/notes/${id}`, { token: bob });
    expect(foreign.status).toBe(404);
    const [fBody, mBody] = [await foreign.json(), await missing.json()];
    expect(fBody).toEqual(mBody);
    for (const [method, path, body] of [
      ["PATCH", `/api/v1/notes/${id}`, { note: { title: "x" } }],
      ["DELETE", `/api/v1/notes/${id}`, undefined],
      ["POST", `/api/v1/notes/${id}/append`, { text: "x" }],
      ["GET", `/api/v1/notes/${id}/snapshots`, undefined],
    ] as const) {
      await expectError(await h.request(method, path, { token: bob, body }), 404, "not_found");
    }
    // Bob's filename space is his own: the same filename makes a separate stream.
    await h.request("POST", "/api/v1/notes/by-filename/shared.log/append", { token: alice, body: { text: "alice" } });
    const b = await h.request("POST", "/api/v1/notes/by-filename/shared.log/append", { token: bob, body: { text: "bob" } });
    expect(b.status).toBe(201);
    const read = await (await h.request("GET", "/api/v1/notes/by-filename/shared.log", { token: bob })).json();
    expect(read.plain_body).toBe("bob\n");
    expect((await (await h.request("GET", "/api/v1/notes", { token: bob })).json()).length).toBe(1);
  });

  test("the same person's personal and team tokens each see only their own workspace", async () => {
    const owner = await h.account("dev", "owner@example.com");
    await h.account("dev", "mate@example.com");
    const teamId = await h.team("owner@example.com", ["mate@example.com"]);
    const personal = await h.token(owner);
    const team = await h.token({ accountId: owner.accountId, workspaceId: teamId });

    const p = await (await h.request("POST", "/api/v1/notes/by-filename/log/append", { token: personal, body: { text: "personal" } })).json();
    const t = await (await h.request("POST", "/api/v1/notes/by-filename/log/append", { token: team, body: { text: "team" } })).json();
    expect(p.id).not.toBe(t.id);
    await expectError(await h.request("GET", `/api/v1/notes/${t.id}`, { token: personal }), 404, "not_found");
    await expectError(await h.request("GET", `/api/v1/notes/${p.id}`, { token: team }), 404, "not_found");
    expect((await (await h.request("GET", "/api/v1/notes/by-filename/log", { token: team })).json()).plain_body).toBe("team\n");

    // Caps and usage are team-wide: a teammate's token sees the team's notes and storage.
    const [mate] = await h.deps.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, "mate@example.com"));
    const mateToken = await h.token({ accountId: mate!.id, workspaceId: teamId });
    const list = await (await h.request("GET", "/api/v1/notes", { token: mateToken })).json();
    expect(list.map((n: { id: string }) => n.id)).toEqual([t.id]);
    const account = await (await h.request("GET", "/api/v1/account", { token: mateToken })).json();
    expect(account).toMatchObject({ plan: "team", workspace: { id: teamId, kind: "team" }, usage: { storage_bytes: 5 } });
  });

  test("a pinned token sees its note only; every other id answers 404", async () => {
    const a = await h.account("dev");
    const full = await h.token(a);
    const pinnedNote = await (await h.request("POST", "/api/v1/notes/by-filename/pinned.log/append", { token: full, body: { text: "a" } })).json();
    const other = await (await h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token: full, body: { text: "b" } })).json();
    const token = await h.token(a, ["read", "write"], { noteId: pinnedNote.id });

    expect((await h.request("GET", `/api/v1/notes/${pinnedNote.id}`, { token })).status).toBe(200);
    expect((await h.request("POST", "/api/v1/notes/by-filename/pinned.log/append", { token, body: { text: "c" } })).status).toBe(200);
    await expectError(await h.request("GET", `/api/v1/notes/${other.id}`, { token }), 404, "not_found");
    await expectError(await h.request("GET", "/api/v1/notes/by-filename/other.log", { token }), 404, "not_found");
    await expectError(await h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token, body: { text: "x" } }), 404, "not_found");
    // It cannot create a new stream either: it sees no other note.
    await expectError(await h.request("POST", "/api/v1/notes/by-filename/new.log/append", { token, body: { text: "x" } }), 404, "not_found");
    await expectError(await h.request("DELETE", `/api/v1/notes/${other.id}`, { token }), 404, "not_found");
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: {} } }), 403, "insufficient_scope");
    const list = await h.request("GET", "/api/v1/notes", { token });
    expect(list.headers.get("x-total-count")).toBe("1");
    expect((await list.json())[0].id).toBe(pinnedNote.id);
  });
});

test("a pinned token cannot reach another stream through appends batched with an unpinned token's", async () => {
  const a = await h.account("dev");
  const full = await h.token(a);
  const pinnedNote = await (await h.request("POST", "/api/v1/notes/by-filename/mine.log/append", { token: full, body: { text: "a" } })).json();
  const pinned = await h.token(a, ["append"], { noteId: pinnedNote.id });
  await h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token: full, body: { text: "b" } });
  // Both in one writer batch: the unpinned append caches other.log's row for the batch.
  const [, refused] = await Promise.all([
    h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token: full, body: { text: "c" } }),
    h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token: pinned, body: { text: "sneaky" } }),
  ]);
  expect(refused.status).toBe(404);
  const other = await (await h.request("GET", "/api/v1/notes/by-filename/other.log", { token: full })).json();
  expect(other.plain_body).toBe("b\nc\n");
});
