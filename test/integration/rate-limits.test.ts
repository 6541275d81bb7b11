import { afterEach, describe, expect, test } from "bun:test";
import { sqlRows } from "../../src/db/sql";
import { errorOf, harness, onPostgres, type Harness, type TestResponse } from "../helpers/harness";
import { rowChanges } from "../helpers/row-changes";

let h: Harness;
afterEach(() => h.close());

const appendAs = (token: string, text = "x", ip?: string) =>
  h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text }, ip });

function expectRateHeaders(res: TestResponse, bucket: string, limit: number) {
  expect(res.headers.get("x-ratelimit-bucket")).toBe(bucket);
  expect(res.headers.get("x-ratelimit-limit")).toBe(String(limit));
  expect(Number(res.headers.get("x-ratelimit-remaining"))).toBeGreaterThanOrEqual(0);
  const reset = Number(res.headers.get("x-ratelimit-reset"));
  expect(reset).toBeGreaterThan(h.clock.now() / 1000);
  expect(reset).toBeLessThanOrEqual(h.clock.now() / 1000 + 60);
}

describe("per-token buckets", () => {
  test("request 301 of a Dev token's append bucket is 429; a second token is unaffected", async () => {
    h = await harness();
    const a = await h.account("dev");
    const first = await h.token(a);
    const second = await h.token(a);
    for (let i = 1; i <= 300; i++) {
      const res = await appendAs(first, `line ${i}`);
      expect(res.status).toBeLessThan(300);
      if (i === 300) expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    }
    const limited = await appendAs(first, "line 301");
    expect(limited.status).toBe(429);
    expect((await errorOf(limited)).code).toBe("rate_limited");
    const retry = Number(limited.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expectRateHeaders(limited, "appends", 300);
    // Nothing of the refused request was written.
    const note = await (await h.request("GET", "/api/v1/notes/by-filename/s.log", { token: second })).json();
    expect(note.plain_body.split("\n").filter(Boolean)).toHaveLength(300);

    expect((await appendAs(second, "other token")).status).toBe(200);
    // Reads and writes are other buckets.
    const read = await h.request("GET", "/api/v1/notes", { token: first });
    expect(read.status).toBe(200);
    expectRateHeaders(read, "reads", 600);
    const write = await h.request("POST", "/api/v1/notes", { token: first, body: { note: {} } });
    expect(write.status).toBe(201);
    expectRateHeaders(write, "writes", 60);

    // The next minute opens the bucket again.
    h.clock.advance(retry * 1000);
    expect((await appendAs(first, "new minute")).status).toBe(200);
  });

  test("Team tokens get the Team budget; bulk counts as one write", async () => {
    h = await harness();
    const t = await h.token(await h.account("team"));
    const res = await h.request("POST", "/api/v1/notes/bulk", { token: t, body: { notes: [{}, {}, {}] } });
    expect(res.status).toBe(201);
    expectRateHeaders(res, "writes", 200);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("199");
    expectRateHeaders(await h.request("GET", "/api/v1/notes", { token: t }), "reads", 2000);
    expectRateHeaders(await appendAs(t), "appends", 1000);
  });

  test("no over-admission under concurrency: 320 simultaneous appends, exactly 300 succeed", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const results = await Promise.all(Array.from({ length: 320 }, (_, i) => appendAs(token, `c${i}`)));
    const ok = results.filter((r) => r.status < 300).length;
    const limited = results.filter((r) => r.status === 429).length;
    expect([ok, limited]).toEqual([300, 20]);
  });

  // SQLite only: its one server counts in memory. PostgreSQL's instances share the windows in a
  // table, which the next test holds to its counterpart.
  test.skipIf(onPostgres)("counting costs no database write", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    await h.request("GET", "/api/v1/notes", { token }); // resolve and cache the token
    await h.deps.writer.idle();
    // total_changes() counts every row this connection changed, the writer's included.
    const changes = () => (h.deps.db.$client.query("SELECT total_changes() AS c").get() as { c: number }).c;
    const before = changes();
    for (let i = 0; i < 50; i++) expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    await h.deps.writer.idle();
    expect(changes()).toBe(before);
  });

  test.skipIf(!onPostgres)("on PostgreSQL counting writes one row of rate_windows, an UNLOGGED table, and no other row", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    await h.request("GET", "/api/v1/notes", { token }); // resolve and cache the token
    await h.deps.writer.idle();
    // Every other table's changed rows (rowChanges leaves the windows out).
    const changes = await rowChanges(h.deps.store);
    const windows = async () =>
      (await sqlRows<{ n: string; counted: string | null }>(h.deps.store, "SELECT count(*) AS n, sum(count) AS counted FROM rate_windows")).map((r) => [Number(r.n), Number(r.counted)])[0]!;
    const before = await changes();
    const [rows, counted] = await windows();
    for (let i = 0; i < 50; i++) expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    await h.deps.writer.idle();
    expect(await changes()).toBe(before);
    // The same window's row, counted up: no row per request, and none in the write-ahead log.
    expect(await windows()).toEqual([rows!, counted! + 50]);
    const [table] = await sqlRows<{ persistence: string }>(h.deps.store, "SELECT relpersistence AS persistence FROM pg_class WHERE relname = 'rate_windows'");
    expect(table!.persistence).toBe("u");
  });

  test("the unlimited profile still answers with rate-limit headers but never 429s a token", async () => {
    h = await harness({ profile: "unlimited" });
    const token = await h.token(await h.account("free"));
    for (let i = 0; i < 400; i++) expect((await appendAs(token, `u${i}`)).status).toBeLessThan(300);
    const res = await appendAs(token);
    expect(res.headers.get("x-ratelimit-bucket")).toBe("appends");
    expect(Number(res.headers.get("x-ratelimit-limit"))).toBeGreaterThan(1_000_000);
  });
});

test("the unlimited profile limits no API request without a token either, but keeps the sign-in form's limit", async () => {
  h = await harness({ profile: "unlimited" });
  for (let i = 0; i < 200; i++) {
    const res = await h.request("GET", "/api/v1/notes", { ip: "203.0.113.8" });
    expect(res.status).toBe(401);
  }
  const last = await h.request("GET", "/api/v1/notes", { ip: "203.0.113.8" });
  expect(last.headers.get("x-ratelimit-bucket")).toBe("anonymous");
  expect(Number(last.headers.get("x-ratelimit-limit"))).toBeGreaterThan(1_000_000);
  // The browser's sign-in form still allows 10 a minute per address.
  const page = await h.request("GET", "/signin", { ip: "203.0.113.8" });
  const cookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) {
    const form = new URLSearchParams({ _csrf: csrf, email: `x${i}@example.com`, password: "wrong" }).toString();
    const headers = { "content-type": "application/x-www-form-urlencoded", origin: "http://notestream.test", cookie };
    statuses.push((await h.request("POST", "/signin", { body: form, ip: "203.0.113.8", headers })).status);
  }
  expect(statuses.slice(0, 10).every((s) => s !== 429)).toBe(true);
  expect(statuses.at(-1)).toBe(429);
});

describe("anonymous and bad-token requests", () => {
  test("60 per minute per address; the 61st is 429; another address is unaffected", async () => {
    h = await harness();
    for (let i = 0; i < 60; i++) {
      const res = await h.request("GET", "/api/v1/notes", { ip: "203.0.113.7" });
      expect(res.status).toBe(401);
      expectRateHeaders(res, "anonymous", 60);
    }
    const limited = await h.request("GET", "/api/v1/notes", { ip: "203.0.113.7" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).not.toBeNull();
    expect((await h.request("GET", "/api/v1/notes", { ip: "203.0.113.8" })).status).toBe(401);
    // The OpenAPI document is public but counted the same way.
    expect((await h.request("GET", "/api/v1/openapi.json", { ip: "203.0.113.7" })).status).toBe(429);
  });

  test("bad tokens are counted before any lookup: once the address is spent, even a valid new token waits", async () => {
    h = await harness();
    const a = await h.account("dev");
    const known = await h.token(a);
    const fresh = await h.token(a);
    // A token used once is cached and no longer costs an anonymous slot.
    expect((await h.request("GET", "/api/v1/notes", { token: known, ip: "198.51.100.1" })).status).toBe(200);
    for (let i = 0; i < 60; i++) {
      const res = await h.request("GET", "/api/v1/notes", { token: `nst_guess${i}`, ip: "198.51.100.1" });
      expect(res.status).toBe(401);
      expectRateHeaders(res, "anonymous", 60);
    }
    const guess = await h.request("GET", "/api/v1/notes", { token: "nst_guess-more", ip: "198.51.100.1" });
    expect(guess.status).toBe(429);
    // Not looked up: a valid token never seen before is refused the same way from this address...
    expect((await h.request("GET", "/api/v1/notes", { token: fresh, ip: "198.51.100.1" })).status).toBe(429);
    // ...while a token already known good, and any other address, go on.
    expect((await h.request("GET", "/api/v1/notes", { token: known, ip: "198.51.100.1" })).status).toBe(200);
    expect((await h.request("GET", "/api/v1/notes", { token: fresh, ip: "198.51.100.2" })).status).toBe(200);
  });

  test("a valid token's first request gives its anonymous slot back", async () => {
    h = await harness();
    const t = await h.token(await h.account("dev"), ["read"]);
    for (let i = 0; i < 59; i++) await h.request("GET", "/api/v1/notes", { ip: "192.0.2.9" });
    const res = await h.request("GET", "/api/v1/notes", { token: t, ip: "192.0.2.9" });
    expect(res.status).toBe(200);
    expectRateHeaders(res, "reads", 600);
    // 59 anonymous + the refunded token slot: one anonymous request is still left.
    expect((await h.request("GET", "/api/v1/notes", { ip: "192.0.2.9" })).status).toBe(401);
    expect((await h.request("GET", "/api/v1/notes", { ip: "192.0.2.9" })).status).toBe(429);
  });
});

describe("client address", () => {
  test("forwarded headers are ignored unless NOTESTREAM_TRUST_PROXY says a proxy stands in front", async () => {
    h = await harness();
    for (let i = 0; i < 60; i++) {
      await h.request("GET", "/api/v1/notes", { ip: "10.0.0.1", headers: { "x-forwarded-for": `203.0.113.${i}` } });
    }
    expect((await h.request("GET", "/api/v1/notes", { ip: "10.0.0.1", headers: { "x-forwarded-for": "203.0.113.200" } })).status).toBe(429);
    await h.close();

    h = await harness({ env: { NOTESTREAM_TRUST_PROXY: "true" } });
    for (let i = 0; i < 60; i++) {
      await h.request("GET", "/api/v1/notes", { ip: "10.0.0.1", headers: { "x-forwarded-for": "spoofed, 203.0.113.5" } });
    }
    expect((await h.request("GET", "/api/v1/notes", { ip: "10.0.0.1", headers: { "x-forwarded-for": "203.0.113.5" } })).status).toBe(429);
    // The proxy's own address is shared by every client; another client behind it is counted apart.
    expect((await h.request("GET", "/api/v1/notes", { ip: "10.0.0.1", headers: { "x-forwarded-for": "203.0.113.6" } })).status).toBe(401);
  });
});
