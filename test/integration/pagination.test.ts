import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

let h: Harness;
let token: string;
let streamId: string;
beforeEach(async () => {
  h = await harness();
  token = await h.token(await h.account("dev"), ["read", "write"]);
  const res = await h.request("POST", "/api/v1/notes/by-filename/events.log/append", { token, body: { text: "started" } });
  streamId = (await res.json()).id;
});
afterEach(() => h.close());

/** Every list of /api/v1: each one takes limit and offset by the same rule. */
const lists: [string, () => string][] = [
  ["notes", () => "/api/v1/notes"],
  ["folders", () => "/api/v1/folders"],
  ["errors", () => "/api/v1/errors"],
  ["inbox deliveries", () => `/api/v1/notes/${streamId}/inbox/deliveries`],
  ["webhook deliveries", () => `/api/v1/notes/${streamId}/webhook/deliveries`],
];

const get = (path: string, query: string) => h.request("GET", `${path}?${query}`, { token });

async function expectFieldRefused(res: TestResponse, field: string) {
  expect(res.status).toBe(422);
  const err = await errorOf(res);
  expect(err.code).toBe("validation_failed");
  expect(err.details).toEqual([{ field, code: expect.any(String), message: expect.any(String) }]);
}

describe.each(lists)("GET %s", (_name, path) => {
  test("an offset that is not an integer from 0 to 1,000,000 is 422 naming offset", async () => {
    for (const offset of ["9223372036854775807", "1e21", "1e99", "1541518570167558917802950656", "-1", "1.5", "abc", "1000001", "1e3", "0x10", ""]) {
      await expectFieldRefused(await get(path(), `offset=${encodeURIComponent(offset)}`), "offset");
    }
  });

  test("offset 1,000,000 answers 200 with an empty array and the list headers", async () => {
    const res = await get(path(), "offset=1000000");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
    expect(res.headers.get("x-total-count")).toMatch(/^\d+$/);
    expect(res.headers.get("link")).toContain('rel="first"');
  });

  test("a limit over 200 is clamped to 200, not refused", async () => {
    const res = await get(path(), "limit=500");
    expect(res.status).toBe(200);
    expect((await res.json()).length).toBeLessThanOrEqual(200);
    expect(res.headers.get("x-total-count")).toMatch(/^\d+$/);
    expect(res.headers.get("link")).toContain("limit=200");
  });

  test("a limit that is not a positive integer is 422 naming limit", async () => {
    for (const limit of ["0", "abc", "-5", "2.5", "1e2", ""]) {
      await expectFieldRefused(await get(path(), `limit=${encodeURIComponent(limit)}`), "limit");
    }
  });
});

describe("clamping and links", () => {
  test("limit 500 over 205 notes answers the first 200, with the next page linked", async () => {
    for (let i = 0; i < 5; i++) {
      const notes = Array.from({ length: i < 4 ? 50 : 4 }, (_, j) => ({ title: `n${i}-${j}` }));
      expect((await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes } })).status).toBe(201);
    }
    const res = await get("/api/v1/notes", "limit=500");
    expect(res.status).toBe(200);
    expect(await res.json()).toHaveLength(200);
    expect(res.headers.get("x-total-count")).toBe("205");
    expect(res.headers.get("link")).toContain('<http://notestream.test/api/v1/notes?limit=200&offset=200>; rel="next"');
  });

  test("leading zeros are still a plain integer", async () => {
    const res = await get("/api/v1/notes", "limit=007&offset=000");
    expect(res.status).toBe(200);
    expect(res.headers.get("link")).toContain("limit=7&offset=0");
  });
});

describe("the OpenAPI document", () => {
  test("documents limit and offset of every list as bounded integers", async () => {
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    const paths = ["/api/v1/notes", "/api/v1/folders", "/api/v1/errors", "/api/v1/notes/{id}/inbox/deliveries", "/api/v1/notes/{id}/webhook/deliveries"];
    for (const p of paths) {
      const params = Object.fromEntries(doc.paths[p].get.parameters.map((x: { name: string; schema: unknown }) => [x.name, x.schema]));
      expect(params.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 50 });
      expect(params.limit.description).toContain("clamped");
      expect(params.offset).toMatchObject({ type: "integer", minimum: 0, maximum: 1_000_000, default: 0 });
    }
  });
});
