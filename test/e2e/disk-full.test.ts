/**
 * A full disk, on the compiled binary: its data dir on a 48 MB tmpfs, filled to the brim with
 * 60 KB appends. Writes are refused with 507 storage_full and Retry-After while reads and /up
 * answer and /up/deep names the disk; a user makes room through the API (delete, then purge from
 * the trash), after which appends are taken again; and after kill -9 and a restart every
 * acknowledged line is there.
 *
 * Needs root and tmpfs (mount); on the PostgreSQL pass the data lives in PostgreSQL, not in the
 * data dir, so there is no disk here to fill.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { BUILD_TIMEOUT_MS, append, buildBinary, cleanup, getNote, onPostgres, provision, request, startServer, tempDir, waitFor, type RunningServer } from "../helpers/binary";
import { parsePrometheusText, valueOf } from "../helpers/prom-text";

const METRICS_TOKEN = "e2e-disk-full-metrics-token-0123";
const RESERVE_MB = 8;
const LINE_BYTES = 60_000;
/** Lines per stream: each stream is a few MB, so purging one gives room back. */
const LINES_PER_STREAM = 80;

let dataDir = "";
let mounted = false;

/** Why this machine cannot run the test, or null once the tmpfs is mounted. */
function mountTmpfs(): string | null {
  if (onPostgres) return "on the PostgreSQL pass the data lives in PostgreSQL, not on the data dir's disk";
  if (process.platform !== "linux") return "needs Linux's tmpfs";
  if (process.getuid?.() !== 0) return "needs root to mount a tmpfs";
  dataDir = tempDir("disk-full");
  const r = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", dataDir], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) return `mount -t tmpfs failed: ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`;
  mounted = true;
  return null;
}

const cannot = mountTmpfs();
if (cannot) console.warn(`disk-full e2e skipped: ${cannot}`);

beforeAll(() => {
  if (!cannot) buildBinary();
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  // Unmounted first, lazily (a server left by a failed test may still hold files there), so that
  // cleanup() finds an ordinary empty directory to remove.
  if (mounted) Bun.spawnSync(["umount", "-l", dataDir]);
  await cleanup();
});

const auth = { authorization: `Bearer ${METRICS_TOKEN}` };
const line = (n: number) => `line-${n} ${"x".repeat(LINE_BYTES)}`;
/** Writer w's n-th line goes to its own streams, in order, so each stream's lines have one order to check. */
const streamOf = (w: number, n: number) => `fill-${w}-${Math.floor(n / LINES_PER_STREAM)}.log`;
const WRITERS = 4;

async function storageMetrics(server: RunningServer) {
  const res = await fetch(`${server.base}/metrics`, { headers: auth });
  expect(res.status).toBe(200);
  const m = parsePrometheusText(await res.text());
  return { full: valueOf(m, "notestream_storage_full"), spells: valueOf(m, "notestream_storage_full_spells_total") };
}

test.skipIf(cannot !== null)(
  `a full disk answers 507 with Retry-After, keeps reads and health, lets a user purge to make room, and loses no acknowledged line${cannot ? ` (skipped: ${cannot})` : ""}`,
  async () => {
    const { token } = provision(dataDir);
    const env = { NOTESTREAM_LIMIT_PROFILE: "unlimited", NOTESTREAM_METRICS_TOKEN: METRICS_TOKEN, NOTESTREAM_DISK_RESERVE_MB: String(RESERVE_MB) };
    let server = await startServer(dataDir, env);
    const reserve = join(dataDir, "notestream.reserve");
    expect(statSync(reserve).size).toBe(RESERVE_MB * 1024 * 1024);

    // Fill the disk, four writers at once, each until its first refusal: every 2xx is an
    // acknowledged line, by stream.
    const acked = new Map<string, number[]>();
    const refusals = await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let n = 0; n < 1_000; n++) {
          const res = await append(server.base, token, streamOf(w, n), line(n));
          if (res.status !== 200 && res.status !== 201) return res;
          acked.set(streamOf(w, n), [...(acked.get(streamOf(w, n)) ?? []), n]);
        }
        return null;
      }),
    );
    for (const refused of refusals) {
      expect(refused?.status).toBe(507);
      expect(refused!.body.error.code).toBe("storage_full");
      expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const refused = refusals[0]!;
    // The reserve is given up the moment the disk fills.
    expect(existsSync(reserve)).toBe(false);
    const total = [...acked.values()].reduce((a, l) => a + l.length, 0);
    expect(total).toBeGreaterThan(WRITERS * LINES_PER_STREAM);

    // Refused before it touches the database, with the same answer, whatever it writes.
    const again = await append(server.base, token, "another.log", "a short line");
    expect(again.status).toBe(507);
    expect(again.headers.get("retry-after")).toBe(refused.headers.get("retry-after"));
    const create = await request(server.base, "POST", "/api/v1/notes", { token, json: { note: { title: "t", plain_body: "b" } } });
    expect(create.status).toBe(507);

    // Reads and health.
    const first = await getNote(server.base, token, streamOf(0, 0));
    expect(first.byte_size).toBeGreaterThan(0);
    expect((await request(server.base, "GET", "/up")).status).toBe(200);
    const deep = await request(server.base, "GET", "/up/deep");
    expect(deep.status).toBe(503);
    expect(deep.body.ok).toBe(false);
    expect(deep.body.checks.disk.status).toBe("fail");
    expect(deep.body.checks.disk.detail).toContain("full");
    expect(deep.body.checks.database.status).toBe("ok");
    expect(await storageMetrics(server)).toEqual({ full: 1, spells: 1 });
    const logs = () => server.logs.map((l) => JSON.parse(l) as { msg: string; level: string });
    // The server's output reaches this process through a pipe, a moment after the answers.
    await waitFor(() => logs().some((l) => l.msg === "storage full: writes refused with 507"), 5_000, "the storage-full log line");
    expect(logs().filter((l) => l.msg === "storage full: writes refused with 507")).toHaveLength(1);

    // Room made through the API: the first stream to the trash, then purged from it.
    const deleted = await request(server.base, "DELETE", `/api/v1/notes/${first.id}`, { token });
    expect(deleted.status).toBe(200);
    const purged = await request(server.base, "DELETE", `/api/v1/trash/${first.id}`, { token });
    expect(purged.status).toBe(200);
    expect(purged.body).toEqual({ id: first.id, purged: true });
    acked.delete(streamOf(0, 0));

    // Appends are taken again, into the pages the purge freed.
    for (let n = 10_000; n < 10_005; n++) {
      const res = await append(server.base, token, "after.log", line(n));
      expect(res.status).toBe(n === 10_000 ? 201 : 200);
      acked.set("after.log", [...(acked.get("after.log") ?? []), n]);
    }
    const healthy = await request(server.base, "GET", "/up/deep");
    expect(healthy.status).toBe(200);
    expect(healthy.body.checks.disk).toEqual({ status: "ok" });
    expect(await storageMetrics(server)).toEqual({ full: 0, spells: 1 });
    await waitFor(() => logs().some((l) => l.msg === "storage has room again: writes accepted"), 5_000, "the room-again log line");
    expect(logs().filter((l) => l.msg === "storage has room again: writes accepted")).toHaveLength(1);

    // kill -9 and a restart on the same (still nearly full) disk: every acknowledged line is there.
    await server.stop("SIGKILL");
    server = await startServer(dataDir, env);
    try {
      expect((await request(server.base, "GET", "/up")).status).toBe(200);
      for (const [filename, numbers] of acked) {
        const body = (await getNote(server.base, token, filename)).plain_body as string;
        const stored = body.split("\n").filter((l) => l.length > 0).map((l) => l.slice(0, l.indexOf(" ")));
        expect({ filename, lines: stored }).toEqual({ filename, lines: numbers.map((n) => `line-${n}`) });
      }
      expect((await request(server.base, "GET", `/api/v1/notes/by-filename/${streamOf(0, 0)}`, { token })).status).toBe(404);
    } finally {
      await server.stop("SIGTERM");
    }
  },
  30_000,
);
