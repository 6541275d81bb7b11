import { afterEach, describe, expect, test } from "bun:test";
import { asc } from "drizzle-orm";
import { sqlRun } from "../../src/db/sql";
import { apiErrors, tokens } from "../../src/db/tables";
import { SCHEDULER_STALE_MS } from "../../src/jobs/scheduler";
import { runAllTasks } from "../../src/schedule";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

const MINUTE = 60_000;
const DAY = 24 * 3600 * 1000;

let h: Harness;
afterEach(() => h.close());

async function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect((await errorOf(res)).code).toBe(code);
}

function apiErrorRows() {
  return h.deps.db.select().from(apiErrors).orderBy(asc(apiErrors.id));
}

describe("GET /up/deep", () => {
  test("is 503 until the scheduler has run, 200 after, and 503 again once its heartbeat is stale", async () => {
    h = await harness();
    const before = await h.request("GET", "/up/deep");
    expect(before.status).toBe(503);
    const b = await before.json();
    expect(b.ok).toBe(false);
    expect(b.checks.database.status).toBe("ok");
    expect(b.checks.scheduler).toMatchObject({ status: "fail" });

    await runAllTasks(h.deps);
    const ok = await h.request("GET", "/up/deep");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, checks: { database: { status: "ok" }, scheduler: { status: "ok" } } });

    h.clock.advance(SCHEDULER_STALE_MS);
    expect((await h.request("GET", "/up/deep")).status).toBe(200);
    h.clock.advance(2 * MINUTE - SCHEDULER_STALE_MS);
    const stale = await h.request("GET", "/up/deep");
    expect(stale.status).toBe(503);
    expect((await stale.json()).checks.scheduler).toMatchObject({ status: "fail", detail: "last heartbeat 120 s ago" });

    await runAllTasks(h.deps);
    expect((await h.request("GET", "/up/deep")).status).toBe(200);
  });

  test("is 503 when the database does not answer", async () => {
    h = await harness();
    await runAllTasks(h.deps);
    await sqlRun(h.deps.store, "ALTER TABLE workspaces RENAME TO workspaces_gone");
    const res = await h.request("GET", "/up/deep");
    expect(res.status).toBe(503);
    expect((await res.json()).checks).toMatchObject({ database: { status: "fail" }, scheduler: { status: "ok" } });
    await sqlRun(h.deps.store, "ALTER TABLE workspaces_gone RENAME TO workspaces");
  });

  test("allows 60 a minute per address: the 61st is 429, another address still gets through", async () => {
    h = await harness();
    await runAllTasks(h.deps);
    for (let i = 0; i < 60; i++) expect((await h.request("GET", "/up/deep", { ip: "203.0.113.9" })).status).toBe(200);
    const limited = await h.request("GET", "/up/deep", { ip: "203.0.113.9" });
    await expectError(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await h.request("GET", "/up/deep", { ip: "198.51.100.4" })).status).toBe(200);
    // The plain liveness check is not limited.
    expect((await h.request("GET", "/up", { ip: "203.0.113.9" })).status).toBe(200);
  });
});

describe("GET /api/v1/errors", () => {
  test("records the 4xx answers to a token, without the token or the body, newest first", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const reader = await h.token(a, ["read"]);
    const secretBody = "a very secret body 7f3a";

    // Each entry is written by the writer shortly after the answer: settle before the clock moves.
    await expectError(await h.request("GET", "/api/v1/notes/note_missing", { token }), 404, "not_found");
    await h.settle();
    h.clock.advance(1000);
    await expectError(await h.request("POST", "/api/v1/notes", { token: reader, body: { note: { title: secretBody } } }), 403, "insufficient_scope");
    await h.settle();
    h.clock.advance(1000);
    await expectError(await h.request("POST", "/api/v1/notes/by-filename/bad%2Fname/append", { token, body: { text: secretBody } }), 422, "validation_failed");
    await h.settle();
    h.clock.advance(1000);
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: `{"note": "${secretBody}` }), 400, "bad_request");
    // Successes are not recorded.
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    await h.settle();

    const res = await h.request("GET", "/api/v1/errors", { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("4");
    const items = await res.json();
    const tokenIds = await h.deps.db.select({ id: tokens.id }).from(tokens).orderBy(asc(tokens.createdAt), asc(tokens.id));
    expect(items.map((e: any) => [e.method, e.path, e.status, e.code])).toEqual([
      ["POST", "/api/v1/notes", 400, "bad_request"],
      ["POST", "/api/v1/notes/by-filename/bad%2Fname/append", 422, "validation_failed"],
      ["POST", "/api/v1/notes", 403, "insufficient_scope"],
      ["GET", "/api/v1/notes/note_missing", 404, "not_found"],
    ]);
    expect(items[2].token_id).not.toBe(items[0].token_id);
    expect(tokenIds.map((t) => t.id)).toContain(items[0].token_id);
    expect(items[0].at).toBe(new Date(h.clock.now()).toISOString());
    expect(items[3].at).toBe(new Date(h.clock.now() - 3000).toISOString());

    const stored = JSON.stringify(await apiErrorRows());
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(reader);
    expect(stored).not.toContain(secretBody);
  });

  test("lists with limit and offset, X-Total-Count and Link", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    for (let i = 0; i < 5; i++) {
      await h.request("GET", `/api/v1/notes/note_missing${i}`, { token });
      await h.settle();
      h.clock.advance(1000);
    }
    await h.settle();
    const res = await h.request("GET", "/api/v1/errors?limit=2&offset=2", { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("5");
    expect((await res.json()).map((e: any) => e.path)).toEqual(["/api/v1/notes/note_missing2", "/api/v1/notes/note_missing1"]);
    const link = res.headers.get("link")!;
    expect(link).toContain('<http://notestream.test/api/v1/errors?limit=2&offset=0>; rel="first"');
    expect(link).toContain('<http://notestream.test/api/v1/errors?limit=2&offset=0>; rel="prev"');
    expect(link).toContain('<http://notestream.test/api/v1/errors?limit=2&offset=4>; rel="next"');
    expect(link).toContain('<http://notestream.test/api/v1/errors?limit=2&offset=4>; rel="last"');
    await expectError(await h.request("GET", "/api/v1/errors?limit=0", { token }), 422, "validation_failed");
  });

  test("another workspace's token does not see them", async () => {
    h = await harness();
    const alice = await h.token(await h.account("dev"));
    const bob = await h.token(await h.account("dev"));
    await h.request("GET", "/api/v1/notes/note_missing", { token: alice });
    await h.settle();
    const res = await h.request("GET", "/api/v1/errors", { token: bob });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("0");
    expect(await res.json()).toEqual([]);
    expect((await (await h.request("GET", "/api/v1/errors", { token: alice })).json()).length).toBe(1);
  });

  test("needs the read scope", async () => {
    h = await harness();
    const a = await h.account("dev");
    const writer = await h.token(a, ["write"]);
    await expectError(await h.request("GET", "/api/v1/errors", { token: writer }), 403, "insufficient_scope");
    await expectError(await h.request("GET", "/api/v1/errors"), 401, "unauthorized");
  });

  test("401s of unknown or missing tokens are not recorded anywhere", async () => {
    h = await harness();
    await h.account("dev");
    await expectError(await h.request("GET", "/api/v1/notes", { token: "nst_doesnotexist0000000000000000000000" }), 401, "unauthorized");
    await expectError(await h.request("GET", "/api/v1/notes"), 401, "unauthorized");
    await expectError(await h.request("GET", "/api/v1/notes", { headers: { authorization: "Basic abc" } }), 401, "unauthorized");
    await h.settle();
    expect(await apiErrorRows()).toEqual([]);
  });

  test("a 429 answered to a token is recorded too", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const reader = await h.token(a, ["read"]);
    for (let i = 0; i < 60; i++) await h.request("POST", "/api/v1/notes", { token, body: { note: { title: `n${i}` } } });
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "61" } } }), 429, "rate_limited");
    await h.settle();
    const items = await (await h.request("GET", "/api/v1/errors", { token: reader })).json();
    expect(items.map((e: any) => [e.method, e.path, e.status, e.code])).toEqual([["POST", "/api/v1/notes", 429, "rate_limited"]]);
  });

  test("entries older than 30 days are pruned by the periodic tasks", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"), ["read"], { expiresInDays: 365 });
    await h.request("GET", "/api/v1/notes/note_old", { token });
    await h.settle();
    h.clock.advance(20 * DAY);
    await h.request("GET", "/api/v1/notes/note_recent", { token });
    await h.settle();

    h.clock.advance(10 * DAY); // the first is exactly 30 days old: kept
    await runAllTasks(h.deps);
    expect((await apiErrorRows()).map((r) => r.path)).toEqual(["/api/v1/notes/note_old", "/api/v1/notes/note_recent"]);
    h.clock.advance(1);
    await runAllTasks(h.deps);
    expect((await apiErrorRows()).map((r) => r.path)).toEqual(["/api/v1/notes/note_recent"]);
    const res = await h.request("GET", "/api/v1/errors", { token });
    expect(res.headers.get("x-total-count")).toBe("1");
  });
});
