/**
 * Issue 23's findings, each as it was made: against the compiled binary over real HTTP. (The stdio
 * client's findings are in mcp-stdio.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BUILD_TIMEOUT_MS, buildBinary, cleanup, provision, request, startServer, tempDir, type RunningServer } from "../helpers/binary";

let server: RunningServer;
let token = "";

beforeAll(async () => {
  buildBinary();
  const dataDir = tempDir("data");
  token = provision(dataDir).token;
  server = await startServer(dataDir);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await server?.stop("SIGTERM");
  await cleanup();
});

const codeOf = (a: { body: { error?: { code?: string } } | null }) => a.body?.error?.code;

describe("the compiled binary answers as documented", () => {
  test("an empty folder id is 422 naming the field on create, bulk and PATCH; a well-formed unknown one says not_found", async () => {
    const created = await request(server.base, "POST", "/api/v1/notes", { token, json: { note: { title: "", plain_body: "", folder_id: "" } } });
    expect([created.status, codeOf(created)]).toEqual([422, "validation_failed"]);
    expect(JSON.stringify(created.body.error.details)).toContain("folder_id");
    const bulk = await request(server.base, "POST", "/api/v1/notes/bulk", { token, json: { notes: [{ title: "a", plain_body: "", folder_id: "" }] } });
    expect(bulk.status).toBe(422);
    const note = await request(server.base, "POST", "/api/v1/notes", { token, json: { note: { title: "n" } } });
    const patched = await request(server.base, "PATCH", `/api/v1/notes/${note.body.id}`, { token, json: { note: { folder_id: "" } } });
    expect(patched.status).toBe(422);
    // A real folder's id, once the folder is gone: well-formed, of no folder.
    const folder = await request(server.base, "POST", "/api/v1/folders", { token, json: { folder: { name: "Gone" } } });
    expect((await request(server.base, "DELETE", `/api/v1/folders/${folder.body.id}`, { token })).status).toBe(200);
    const unknown = await request(server.base, "PATCH", `/api/v1/notes/${note.body.id}`, { token, json: { note: { folder_id: folder.body.id } } });
    // As for any other folder named in a body: 422, the detail saying which field names no folder.
    expect([unknown.status, codeOf(unknown), unknown.body.error.details[0].code]).toEqual([422, "validation_failed", "not_found"]);
  });

  test("a huge offset is 422 naming offset on every list; over 200 is clamped", async () => {
    for (const list of ["/api/v1/notes", "/api/v1/folders", "/api/v1/errors"]) {
      for (const offset of ["9223372036854775807", "1e21", "1e99"]) {
        const res = await request(server.base, "GET", `${list}?offset=${offset}`, { token });
        expect([list, offset, res.status, codeOf(res)]).toEqual([list, offset, 422, "validation_failed"]);
        expect(res.body.error.details[0].field).toBe("offset");
      }
    }
    const clamped = await request(server.base, "GET", "/api/v1/notes?limit=500", { token });
    expect(clamped.status).toBe(200);
  });

  test("the export limit's 429 is not replayed under its Idempotency-Key", async () => {
    for (const key of ["x1", "x2"]) expect((await request(server.base, "POST", "/api/v1/export", { token, headers: { "idempotency-key": key } })).status).toBe(202);
    for (let i = 0; i < 2; i++) {
      const third = await request(server.base, "POST", "/api/v1/export", { token, headers: { "idempotency-key": "x3" } });
      expect(third.status).toBe(429);
      expect(third.headers.get("idempotent-replay")).toBeNull();
      expect(third.headers.get("retry-after")).not.toBeNull();
    }
  });

  test("without a token a bad query is 401, not 422; another method on a known path is 405 with Allow", async () => {
    const anonymous = await request(server.base, "GET", "/api/v1/notes?limit=abc");
    expect([anonymous.status, codeOf(anonymous)]).toEqual([401, "unauthorized"]);
    const put = await request(server.base, "PUT", "/api/v1/notes", { token, json: {} });
    expect([put.status, codeOf(put), put.headers.get("allow")]).toEqual([405, "method_not_allowed", "GET, HEAD, POST"]);
    const del = await request(server.base, "DELETE", "/api/v1/folders", { token });
    expect([del.status, del.headers.get("allow")]).toEqual([405, "GET, HEAD, POST"]);
  });

  test("the unlimited profile answers the 61st anonymous request of a minute like the first", async () => {
    const dataDir = tempDir("unlimited");
    provision(dataDir);
    const unlimited = await startServer(dataDir, { NOTESTREAM_LIMIT_PROFILE: "unlimited" });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 70; i++) statuses.push((await request(unlimited.base, "GET", "/api/v1/notes")).status);
      expect(new Set(statuses)).toEqual(new Set([401]));
    } finally {
      await unlimited.stop("SIGTERM");
    }
  });
});
