import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { workspaces } from "../../src/db/tables";
import { errorOf, FakeClock, harness, type Harness } from "../helpers/harness";
import { parsePrometheusText, valueOf, type Family } from "../helpers/prom-text";
import { receiver } from "../helpers/receiver";

const TOKEN = "metrics-token-0123456789abcdef";
const ALLOW = { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8,::1/128", NOTESTREAM_WEBHOOK_TIMEOUT_MS: "400" };

let h: Harness;
let r: ReturnType<typeof receiver> | undefined;
afterEach(async () => {
  await h.close();
  r?.stop();
  r = undefined;
});

async function scrape(): Promise<Map<string, Family>> {
  const res = await h.request("GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheusText(await res.text());
}

const append = (token: string, filename: string, text: string) =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text } });

describe("GET /metrics", () => {
  test("without NOTESTREAM_METRICS_TOKEN it does not exist: 404 not_found, as any unknown path", async () => {
    h = await harness();
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
      const res = await h.request("GET", "/metrics", { headers });
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
  });

  test("with it set, only that Bearer token reads them: none, another or a malformed one is 401", async () => {
    h = await harness({ env: { NOTESTREAM_METRICS_TOKEN: TOKEN } });
    const a = await h.account("dev");
    const apiToken = await h.token(a);
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, `Bearer ${apiToken}`]) {
      const res = await h.request("GET", "/metrics", { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect((await errorOf(res)).code).toBe("unauthorized");
    }
    const ok = await h.request("GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("no-store");
  });

  test("a token short enough to guess is refused at start", () => {
    expect(() => loadConfig({ NOTESTREAM_METRICS_TOKEN: "short" })).toThrow("NOTESTREAM_METRICS_TOKEN");
    expect(() => loadConfig({ NOTESTREAM_METRICS_TOKEN: "has a space in it, sixteen+" })).toThrow("NOTESTREAM_METRICS_TOKEN");
    expect(loadConfig({ NOTESTREAM_METRICS_TOKEN: ` ${TOKEN} ` }).metricsToken).toBe(TOKEN);
    expect(loadConfig({}).metricsToken).toBeNull();
  });

  test("every family parses strictly, with its type and label set; the process metrics are there", async () => {
    h = await harness({ env: { NOTESTREAM_METRICS_TOKEN: TOKEN } });
    const m = await scrape();
    const want: [string, string, string[]][] = [
      ["notestream_http_requests_total", "counter", ["method", "route", "status"]],
      ["notestream_append_duration_seconds", "histogram", ["le"]],
      ["notestream_commit_batch_writes", "histogram", ["le"]],
      ["notestream_wal_fsync_duration_seconds", "histogram", ["le"]],
      ["notestream_job_queue_depth", "gauge", ["queue"]],
      ["notestream_job_queue_oldest_age_seconds", "gauge", ["queue"]],
      ["notestream_webhook_deliveries_total", "counter", ["outcome"]],
      ["notestream_webhooks_disabled_total", "counter", []],
      ["notestream_inbox_payloads_total", "counter", ["outcome"]],
      ["notestream_deadman_alerts_total", "counter", []],
      ["notestream_full_stream_alerts_total", "counter", []],
      ["notestream_mails_total", "counter", ["outcome"]],
      ["notestream_sse_streams_open", "gauge", []],
      ["notestream_database_bytes", "gauge", []],
      ["notestream_wal_bytes", "gauge", []],
      ["notestream_storage_full", "gauge", []],
      ["notestream_storage_full_spells_total", "counter", []],
      ["notestream_storage_room_bytes", "gauge", []],
    ];
    for (const [name, type, labels] of want) {
      const f = m.get(name);
      expect(f, name).toBeDefined();
      expect(f!.type).toBe(type as Family["type"]);
      expect(f!.help).toBeTruthy();
      for (const s of f!.samples) expect(Object.keys(s.labels).sort()).toEqual(s.name.endsWith("_bucket") ? ["le"] : s.name.endsWith("_sum") || s.name.endsWith("_count") ? [] : labels);
    }
    // Every outcome is there from the start, at 0, so a rate() has a series before the first event.
    expect(m.get("notestream_webhook_deliveries_total")!.samples.map((s) => s.labels.outcome)).toEqual(["delivered", "retry", "failed"]);
    expect(m.get("notestream_inbox_payloads_total")!.samples.map((s) => s.labels.outcome)).toEqual(["delivered", "retry", "dead"]);
    expect(m.get("notestream_mails_total")!.samples.map((s) => s.labels.outcome)).toEqual(["sent", "failed"]);
    expect(m.get("notestream_job_queue_depth")!.samples.map((s) => s.labels.queue)).toEqual(["account-deletion", "channel", "export", "inbox", "mail", "notify-lines", "webhook"]);
    expect(valueOf(m, "notestream_database_bytes")).toBeGreaterThan(0);
    for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds"]) expect(m.has(name), name).toBe(true);
    // Only the app's own metrics, under its own prefix, besides prom-client's process ones.
    for (const name of m.keys()) expect(name).toMatch(/^(notestream_|process_|nodejs_)/);
  });

  test("appends move the request counter (by route pattern, not path), the append histogram and the batch sizes", async () => {
    h = await harness({ env: { NOTESTREAM_METRICS_TOKEN: TOKEN } });
    const token = await h.token(await h.account("dev"));
    const before = await scrape();
    const created = await (await append(token, "deploys.log", "one")).json();
    await Promise.all([append(token, "deploys.log", "two"), append(token, "deploys.log", "three")]);
    expect((await h.request("POST", `/api/v1/notes/${created.id}/append`, { token, body: { text: "four" } })).status).toBe(200);
    expect((await h.request("GET", `/api/v1/notes/${created.id}`, { token })).status).toBe(200);
    expect((await h.request("GET", "/api/v1/notes/note_doesnotexist", { token })).status).toBe(404);
    expect((await h.request("GET", "/no/such/page/abc123")).status).toBe(404);
    const after = await scrape();

    const requests = (labels: Record<string, string>, m: Map<string, Family>) => valueOf(m, "notestream_http_requests_total", labels) ?? 0;
    const byFilename = { method: "POST", route: "/api/v1/notes/by-filename/:filename/append" };
    expect(requests({ ...byFilename, status: "201" }, after) - requests({ ...byFilename, status: "201" }, before)).toBe(1);
    expect(requests({ ...byFilename, status: "200" }, after) - requests({ ...byFilename, status: "200" }, before)).toBe(2);
    expect(requests({ method: "POST", route: "/api/v1/notes/:id/append", status: "200" }, after)).toBe(1);
    expect(requests({ method: "GET", route: "/api/v1/notes/:id", status: "200" }, after)).toBe(1);
    expect(requests({ method: "GET", route: "/api/v1/notes/:id", status: "404" }, after)).toBe(1);
    expect(requests({ method: "GET", route: "unmatched", status: "404" }, after)).toBe(1);
    // The first scrape is counted too, under its own route.
    expect(requests({ method: "GET", route: "/metrics", status: "200" }, after)).toBe(1);
    // No id, filename or path ever becomes a label.
    const routes = after.get("notestream_http_requests_total")!.samples.map((s) => s.labels.route!);
    for (const route of routes) expect(route).not.toMatch(/deploys|note_|abc123/);

    const count = (name: string, m: Map<string, Family>) => valueOf(m, `${name}_count`) ?? 0;
    expect(count("notestream_append_duration_seconds", after) - count("notestream_append_duration_seconds", before)).toBe(4);
    expect(valueOf(after, "notestream_append_duration_seconds_sum")).toBeGreaterThan(0);
    // Four appends committed, in at most four batches (two sent together may share one).
    const writes = (m: Map<string, Family>) => valueOf(m, "notestream_commit_batch_writes_sum") ?? 0;
    expect(writes(after) - writes(before)).toBeGreaterThanOrEqual(4);
    expect(count("notestream_commit_batch_writes", after) - count("notestream_commit_batch_writes", before)).toBeGreaterThanOrEqual(1);
  });

  test("a webhook delivery to a loopback receiver counts as delivered; a failing one as retry, then its queue shows the waiting job and its age", async () => {
    h = await harness({ env: { NOTESTREAM_METRICS_TOKEN: TOKEN, ...ALLOW }, clock: new FakeClock(Date.now()) });
    let fail = false;
    r = receiver(() => new Response(fail ? "down" : "ok", { status: fail ? 503 : 200 }));
    const token = await h.token(await h.account("dev"));
    const { id } = await (await append(token, "hooks.log", "first")).json();
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `${r.url}/hook` } } })).status).toBe(200);
    const deliveries = (m: Map<string, Family>, outcome: string) => valueOf(m, "notestream_webhook_deliveries_total", { outcome });

    await append(token, "hooks.log", "delivered");
    await h.jobs.drain();
    await r.waitFor(1);
    let m = await scrape();
    expect(deliveries(m, "delivered")).toBe(1);
    expect(deliveries(m, "retry")).toBe(0);
    expect(valueOf(m, "notestream_job_queue_depth", { queue: "webhook" })).toBe(0);

    fail = true;
    await append(token, "hooks.log", "retried");
    await h.jobs.drain();
    await r.waitFor(2);
    h.clock.advance(5_000);
    m = await scrape();
    expect(deliveries(m, "delivered")).toBe(1);
    expect(deliveries(m, "retry")).toBe(1);
    expect(valueOf(m, "notestream_job_queue_depth", { queue: "webhook" })).toBe(1);
    expect(valueOf(m, "notestream_job_queue_oldest_age_seconds", { queue: "webhook" })).toBeGreaterThanOrEqual(5);
  });

  test("an inbox payload that cannot become a line is counted dead; one that can, delivered; the inbox token never shows", async () => {
    h = await harness({ env: { NOTESTREAM_METRICS_TOKEN: TOKEN } });
    const a = await h.account("dev");
    const token = await h.token(a);
    const { id } = await (await append(token, "inbox.log", "first")).json();
    const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
    const send = (text: string) => h.request("POST", `/h/${inbox.token}`, { body: text, headers: { "content-type": "text/plain" } });

    expect((await send("fine")).status).toBe(202);
    await h.jobs.drain();
    // A read-only account: the payload is dead at its first attempt.
    expect((await send("refused")).status).toBe(202);
    await h.deps.db.update(workspaces).set({ state: "read_only" }).where(eq(workspaces.id, a.workspaceId));
    await h.jobs.drain();

    const res = await h.request("GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await res.text();
    const m = parsePrometheusText(text);
    expect(valueOf(m, "notestream_inbox_payloads_total", { outcome: "delivered" })).toBe(1);
    expect(valueOf(m, "notestream_inbox_payloads_total", { outcome: "dead" })).toBe(1);
    expect(valueOf(m, "notestream_http_requests_total", { method: "POST", route: "/h/:token", status: "202" })).toBe(2);
    expect(text).not.toContain(inbox.token);
  });

  test("open follows (SSE) are counted while they are open", async () => {
    h = await harness({ env: { NOTESTREAM_METRICS_TOKEN: TOKEN } });
    const token = await h.token(await h.account("dev"));
    await append(token, "live.log", "first");
    const follow = await h.request("GET", "/api/v1/notes/by-filename/live.log/lines", { token, headers: { accept: "text/event-stream" } });
    expect(follow.status).toBe(200);
    expect(valueOf(await scrape(), "notestream_sse_streams_open")).toBe(1);
    await follow.body!.cancel();
    await Bun.sleep(20);
    expect(valueOf(await scrape(), "notestream_sse_streams_open")).toBe(0);
  });
});
