import { afterEach, describe, expect, test } from "bun:test";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

describe("GET /account", () => {
  test("shows plan, state, usage and caps of the token's workspace", async () => {
    h = harness();
    const a = await h.account("dev", "me@example.com");
    const token = await h.token(a);
    await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "hello" } });
    const res = await h.request("GET", "/api/v1/account", { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: a.accountId,
      email: "me@example.com",
      plan: "dev",
      state: "active",
      limit_profile: "standard",
      api_access: true,
      workspace: { id: a.workspaceId, kind: "personal" },
      usage: { notes: 1, plain_notes: 1, rich_notes: 0, storage_bytes: 6, folders: 3, active_tokens: 1 },
      caps: {
        notes: null,
        plain_notes: 10_000,
        rich_notes: 1_000,
        storage_bytes: 15 * 1024 ** 3,
        plain_note_bytes: 3 * 1024 * 1024,
        folders: 100,
        active_tokens: 3,
      },
      rate_limits_per_minute: { reads: 600, writes: 60, appends: 300 },
    });
  });

  test("the alternate profile maps team to Dev-pro", async () => {
    h = harness({ profile: "alternate" });
    const token = await h.token(await h.account("team"));
    const body = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(body.caps).toMatchObject({ plain_notes: 30_000, storage_bytes: 30 * 1024 ** 3, active_tokens: 10 });
  });
});

describe("OpenAPI", () => {
  test("GET /api/v1/openapi.json is an OpenAPI 3.1 document of every route, without auth", async () => {
    h = harness();
    const res = await h.request("GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toStartWith("3.1");
    expect(doc.info.title).toBe("notestream API");
    const paths = Object.keys(doc.paths);
    for (const p of [
      "/api/v1/notes",
      "/api/v1/notes/{id}",
      "/api/v1/notes/by-filename/{filename}",
      "/api/v1/notes/by-filename/{filename}/append",
      "/api/v1/notes/{id}/append",
      "/api/v1/notes/{id}/snapshots",
      "/api/v1/notes/{id}/snapshots/{snapshot_id}/restore",
      "/api/v1/folders",
      "/api/v1/folders/{id}",
      "/api/v1/account",
    ]) {
      expect(paths).toContain(p);
    }
    const append = doc.paths["/api/v1/notes/by-filename/{filename}/append"].post;
    expect(JSON.stringify(append.requestBody)).toContain("text");
    expect(Object.keys(append.responses)).toEqual(expect.arrayContaining(["200", "201"]));
    expect(doc.components.securitySchemes.bearer.scheme).toBe("bearer");
  });
});

test("the health probe answers without auth", async () => {
  h = harness();
  const res = await h.request("GET", "/up");
  expect(res.status).toBe(200);
});

test("no request ever sees a stack trace: an internal failure is a 500 in the envelope", async () => {
  h = harness();
  const token = await h.token(await h.account("dev"));
  h.deps.db.$client.run("DROP TABLE snapshots");
  const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).json();
  const res = await h.request("GET", `/api/v1/notes/${id}/snapshots`, { token });
  expect(res.status).toBe(500);
  const err = await errorOf(res);
  expect(err.code).toBe("internal_error");
  expect(JSON.stringify(err)).not.toContain("at ");
});
