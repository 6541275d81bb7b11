/**
 * Issue 23: requests generated from the OpenAPI document and a stdio client found answers that
 * did not match the documented ones. One test per finding here; the generated sweep is
 * openapi-fuzz.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { count, inArray } from "drizzle-orm";
import { idempotencyKeys, notes } from "../../src/db/tables";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const errorOf = async (res: { json(): Promise<any> }) => ((await res.json()) as { error: { code: string; message: string } }).error;

describe("405 for a known path with another method", () => {
  test("PUT /notes, DELETE /folders and PUT /notes/{id} answer 405 method_not_allowed with Allow", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "n" } } })).json();
    for (const [method, path, allow] of [
      ["PUT", "/api/v1/notes", "GET, HEAD, POST"],
      ["DELETE", "/api/v1/folders", "GET, HEAD, POST"],
      ["PUT", `/api/v1/notes/${id}`, "DELETE, GET, HEAD, PATCH"],
      ["GET", "/api/v1/notes/by-filename/x.log/append", "POST"],
    ] as const) {
      const res = await h.request(method, path, { token, body: method === "GET" ? undefined : {} });
      expect([method, path, res.status]).toEqual([method, path, 405]);
      expect(res.headers.get("allow")).toBe(allow);
      expect((await errorOf(res)).code).toBe("method_not_allowed");
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    }
    // An unknown path is still 404.
    const missing = await h.request("GET", "/api/v1/nothing-here", { token });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe("not_found");
  });
});

describe("authentication comes before validation", () => {
  test("GET /notes?limit=abc without a token is 401, not 422: an anonymous caller learns no validation rule", async () => {
    h = await harness();
    for (const path of ["/api/v1/notes?limit=abc", "/api/v1/notes?offset=-1", "/api/v1/folders?limit=0", "/api/v1/notes/x/snapshots?limit=abc"]) {
      const res = await h.request("GET", path);
      expect([path, res.status]).toEqual([path, 401]);
      expect((await errorOf(res)).code).toBe("unauthorized");
    }
  });
});

describe("refusals are never stored under an Idempotency-Key", () => {
  const key = (k: string) => ({ "idempotency-key": k });
  const stored = async () => (await h.deps.db.select({ n: count() }).from(idempotencyKeys).where(inArray(idempotencyKeys.status, [401, 403, 429])))[0]!.n;

  test("the export limit's 429 is answered again with Retry-After, not replayed; an hour later the same key runs", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    for (const k of ["e1", "e2"]) expect((await h.request("POST", "/api/v1/export", { token, headers: key(k) })).status).toBe(202);
    for (let i = 0; i < 2; i++) {
      const third = await h.request("POST", "/api/v1/export", { token, headers: key("e3") });
      expect(third.status).toBe(429);
      expect(third.headers.get("idempotent-replay")).toBeNull();
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(await stored()).toBe(0);
    h.clock.advance(61 * 60 * 1000);
    const later = await h.request("POST", "/api/v1/export", { token, headers: key("e3") });
    expect(later.status).toBe(202);
    expect(later.headers.get("idempotent-replay")).toBeNull();
  });

  test("a token's rate-limit 429 is not stored: after the window the same key runs", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    // Dev: 60 writes a minute.
    for (let i = 0; i < 60; i++) await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: `f${i}` } } });
    const limited = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "late" } }, headers: key("n1") });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).not.toBeNull();
    h.clock.advance(61_000);
    const later = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "late" } }, headers: key("n1") });
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replay")).toBeNull();
    expect(await stored()).toBe(0);
  });

  test("a plan cap's 403 is not stored: once there is room, the same key creates the note", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    // Fill the notes cap through the database, as if written over time.
    const caps = (await (await h.request("GET", "/api/v1/account", { token })).json()).caps;
    const cap = (caps.notes ?? caps.plain_notes) as number;
    expect(cap).toBeGreaterThan(0);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "first" } } })).json();
    const fill = Array.from({ length: cap - 1 }, (_, i) => ({
      id: `note_fill${i + 2}`,
      workspaceId: a.workspaceId,
      kind: "editable" as const,
      format: "plain" as const,
      title: "fill",
      byteSize: 0,
      createdAt: 0,
      updatedAt: 0,
      lastWriteAt: 0,
    }));
    // In slices: one statement's parameters are bounded.
    for (let i = 0; i < fill.length; i += 500) await h.deps.db.insert(notes).values(fill.slice(i, i + 500));
    const full = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "one more" } }, headers: key("c1") });
    expect(full.status).toBe(403);
    expect((await errorOf(full)).code).toBe("cap_exceeded");
    expect(await stored()).toBe(0);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    const room = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "one more" } }, headers: key("c1") });
    expect(room.status).toBe(201);
    expect(room.headers.get("idempotent-replay")).toBeNull();
  });
});

describe("the OpenAPI document describes the export download as what is served", () => {
  test("GET /export/{id}/download is documented as application/zip, binary, the media type the built export is served with", async () => {
    h = await harness();
    h.deps.mailer = { send: async () => {} };
    const token = await h.token(await h.account("dev"));
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    const ok = doc.paths["/api/v1/export/{id}/download"].get.responses["200"];
    expect(ok.content).toEqual({ "application/zip": { schema: { type: "string", format: "binary" } } });

    const { id } = await (await h.request("POST", "/api/v1/export", { token })).json();
    await h.jobs.drain();
    const record = await (await h.request("GET", `/api/v1/export/${id}`, { token })).json();
    expect(record.status).toBe("ready");
    const res = await h.request("GET", new URL(record.download_url).pathname, { token });
    expect(res.status).toBe(200);
    expect(Object.keys(ok.content)).toEqual([res.headers.get("content-type") ?? "no content-type"]);
  });
});

describe("a schema's refusals name the field that is wrong and what it takes", () => {
  test("an item of a nullable list is named to its own field, not the list's; a field of fixed values lists them", async () => {
    h = await harness();
    const token = await h.token(await h.account("team"));
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/a.log/append", { token, body: { text: "x" } })).json();
    const details = async (res: Response) => {
      expect(res.status).toBe(422);
      return ((await res.json()) as { error: { details: { field: string; code: string; message: string }[] } }).error.details;
    };
    const patch = (fields: unknown) => h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: fields } });
    expect(await details(await patch({ maintenance: [{ schedule: "0 2 * * 0" }] }))).toEqual([{ field: "note.maintenance.0.duration_seconds", code: "required", message: "is required" }]);
    expect(await details(await patch({ rules: [{ match: "x", then: "ok" }, { match: "y", regex: "yes", then: "ok" }] }))).toEqual([
      { field: "note.rules.1.regex", code: "invalid_type", message: "expected boolean" },
    ]);
    expect(await details(await patch({ rules: [{ match: "x" }] }))).toEqual([{ field: "note.rules.0.then", code: "required", message: "is required" }]);
    const format = await details(await h.request("POST", "/api/v1/channels", { token, body: { channel: { name: "a", url: "https://example.com/x", format: "irc" } } }));
    expect(format).toEqual([{ field: "channel.format", code: "invalid", message: 'must be one of "generic", "slack", "discord", "teams", "google_chat", "mattermost"' }]);
    expect((await details(await patch({ retention: "forever" })))[0]!.message).toBe('must be one of "reject", "drop_oldest"');
    // Null is still what the list's union takes: it clears the windows.
    expect((await patch({ maintenance: null })).status).toBe(200);
  });
});

describe("write bodies are lenient (README, The API)", () => {
  test("a number as a string of digits is read as the number; fields a write does not know are ignored inside the wrapper", async () => {
    h = await harness();
    const token = await h.token(await h.account("team"));
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/a.log/append", { token, body: { text: "x" } })).json();
    const patched = await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { expected_interval_seconds: "3600" } } });
    expect(patched.status).toBe(200);
    const record = await patched.json();
    expect(record.expected_interval_seconds).toBe(3600);
    // Fields a write does not know are ignored inside the wrapper, not applied.
    expect((await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { id: "note_other", created_at: "2020-01-01T00:00:00Z", title: "renamed" } } })).status).toBe(200);
    expect(await (await h.request("GET", `/api/v1/notes/${note.id}`, { token })).json()).toMatchObject({ id: note.id, created_at: record.created_at, title: "renamed" });
  });
});
