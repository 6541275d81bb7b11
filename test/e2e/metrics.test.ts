/**
 * GET /metrics from the compiled binary (prom-client inside `bun build --compile`), with real
 * fsyncs (NOTESTREAM_SYNCHRONOUS=FULL, the default), and the request log line's address.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BUILD_TIMEOUT_MS, append, buildBinary, cleanup, onPostgres, provision, startServer, tempDir, waitFor } from "../helpers/binary";
import { parsePrometheusText, valueOf } from "../helpers/prom-text";

beforeAll(() => void buildBinary(), BUILD_TIMEOUT_MS);
afterAll(() => cleanup());

const METRICS_TOKEN = "e2e-metrics-token-0123456789";

test("the binary serves /metrics to its token: appends, fsyncs, process metrics; request lines carry the address", async () => {
  const dataDir = tempDir("data");
  const { token } = provision(dataDir);
  const server = await startServer(dataDir, { NOTESTREAM_METRICS_TOKEN: METRICS_TOKEN });
  try {
    for (let i = 0; i < 5; i++) expect((await append(server.base, token, "m.log", `line ${i}`)).status).toBeLessThan(300);
    expect((await fetch(`${server.base}/metrics`)).status).toBe(401);
    const res = await fetch(`${server.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const m = parsePrometheusText(await res.text());
    const route = "/api/v1/notes/by-filename/:filename/append";
    expect(valueOf(m, "notestream_http_requests_total", { method: "POST", route, status: "201" })).toBe(1);
    expect(valueOf(m, "notestream_http_requests_total", { method: "POST", route, status: "200" })).toBe(4);
    expect(valueOf(m, "notestream_append_duration_seconds_count")).toBe(5);
    expect(valueOf(m, "notestream_commit_batch_writes_sum")).toBeGreaterThanOrEqual(5);
    expect(valueOf(m, "notestream_database_bytes")).toBeGreaterThan(0);
    if (onPostgres) {
      // PostgreSQL's write-ahead log is the server's: no fsync of ours to time, no WAL file to measure.
      expect(valueOf(m, "notestream_wal_fsync_duration_seconds_count")).toBe(0);
      expect(valueOf(m, "notestream_wal_bytes")).toBeUndefined();
    } else {
      // Each answered append waited for an fsync of the log.
      expect(valueOf(m, "notestream_wal_fsync_duration_seconds_count")).toBeGreaterThanOrEqual(1);
      expect(valueOf(m, "notestream_wal_bytes")).toBeGreaterThan(0);
    }
    expect(valueOf(m, "process_resident_memory_bytes")).toBeGreaterThan(0);

    await waitFor(() => server.logs.filter((l) => l.includes('"msg":"request"')).length >= 7, 5_000, "the request lines");
    const requests = server.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    for (const line of requests) expect(line.ip).toBe("127.0.0.1");
    expect(server.logs.join("\n")).not.toContain(METRICS_TOKEN);
    expect(server.logs.join("\n")).not.toContain(token);
  } finally {
    await server.stop("SIGTERM");
  }

  // Without the variable there is no such endpoint.
  const off = await startServer(dataDir);
  try {
    expect((await fetch(`${off.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
  } finally {
    await off.stop("SIGTERM");
  }
}, 30_000);
