/**
 * `make bench`: measures the compiled binary against the limits of this machine, in one run,
 * and prints (and writes to bench/results/latest.md) a table of figures and ratios.
 *
 *   1. ceiling: a bare Bun.serve POST that parses the same JSON (and the durable ceiling:
 *      the same with a group-committed INSERT and the WAL fdatasync, bench/minimal.ts)
 *   2. raw SQLite: single-row commits per second, synchronous FULL and NORMAL
 *   3. notestream appends by filename (100-byte lines, 50 connections, 10 s), FULL and NORMAL
 *      (1-3 run BENCH_ROUNDS times, default 3; each append run between two ceiling runs)
 *   4. append latency on a 3 MB note, and on a full 3 MB drop_oldest note, against an empty note
 *      (`BENCH_ONLY=latency` runs only these rows)
 *   5. outbound webhook latency, append to receipt at a loopback receiver
 *   6. RSS idle and peak under load; start-up time to the first served request
 *   7. kill -9 during appends: no acknowledged append lost after restart
 *   8. what the search index costs an append: with it against without it, side by side
 *      (`BENCH_ONLY=search` runs only this row)
 *   9. PostgreSQL (docs/SCALING.md): raw single-row commits on a server that syncs every commit,
 *      and appends at 50 connections against one binary serving from it and against two
 *      instances on the same database, as multiples of the raw commit rate
 *      (`BENCH_ONLY=postgres` runs only these rows, `BENCH_POSTGRES=0` leaves them out)
 *  10. growth: an append, a tail, the notes list, the account, a common and a rare word's search
 *      on one account of 2,000 streams and then of 20,000, as ratios (bench/growth.ts;
 *      `BENCH_ONLY=growth` runs only these rows)
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CONNECTIONS,
  dropSearchTriggers,
  LINE,
  LOG_LINE,
  procs,
  provision as provisionBinary,
  readPort,
  ROOT,
  startServer as startBinary,
  stop,
  tmp,
  wrk as wrkRun,
  wrkTogether,
  type WrkResult,
} from "./lib";
import { growthRows } from "./growth";
import { cpuSecondsOf, durableCluster, notestreamUrl, provisionPg, rawCommits, startPgServer } from "./pg";

// BENCH_BIN: another build to measure (make bench builds dist/notestream).
const BIN = process.env.BENCH_BIN ?? join(ROOT, "dist", "notestream");
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const wrk = (url: string, opts: { token?: string; connections?: number; seconds?: number; requests?: number; text?: string } = {}) => wrkRun(url, { seconds: DURATION, ...opts });
const startServer = (dataDir: string, env: Record<string, string> = {}) => startBinary(BIN, dataDir, env);
const provision = (dataDir: string, plan?: string) => provisionBinary(BIN, dataDir, plan);

function rssKb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rss: Number(/VmRSS:\s+(\d+)/.exec(status)![1]), peak: Number(/VmHWM:\s+(\d+)/.exec(status)![1]) };
}


const append = (base: string, token: string, filename: string, text: string) =>
  fetch(`${base}/api/v1/notes/by-filename/${filename}/append`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });

function rawSqlite(sync: "FULL" | "NORMAL", round: number, seconds = 3): number {
  const path = join(tmp, `raw-${sync}-${round}.db`);
  const db = new Database(path, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run(`PRAGMA synchronous = ${sync}`);
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const insert = db.query("INSERT INTO t (v) VALUES (?)");
  const begin = db.query("BEGIN");
  const commit = db.query("COMMIT");
  let n = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    begin.run();
    insert.run(LINE);
    commit.run();
    n++;
  }
  db.close();
  return n / seconds;
}

const pct = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const k = (n: number) => Math.round(n).toLocaleString("en-US");

type Row = (...cells: string[]) => void;

/**
 * Fills a stream to just under its 3 MB cap with one chunk per wrk line, as 1-connection appends
 * store them, so that every later append must first drop the oldest line. Written into the
 * stopped server's database: through the API it would take 30,000 requests.
 */
function fillWithLines(dataDir: string, noteId: string): void {
  const db = new Database(join(dataDir, "notestream.db"));
  const text = `${LINE}\n`;
  const { size, ws } = db.query<{ size: number; ws: string }, [string]>("SELECT byte_size AS size, workspace_id AS ws FROM notes WHERE id = ?").get(noteId)!;
  const n = Math.floor((3 * 1024 * 1024 - size) / text.length);
  const at = Date.now();
  db.transaction(() => {
    const insert = db.query("INSERT INTO note_chunks (note_id, text, at) VALUES (?, ?, ?)");
    for (let i = 0; i < n; i++) insert.run(noteId, text, at);
    db.query("UPDATE notes SET byte_size = byte_size + ? WHERE id = ?").run(n * text.length, noteId);
    db.query("UPDATE workspaces SET storage_used = storage_used + ? WHERE id = ?").run(n * text.length, ws);
  })();
  db.close();
}

/**
 * Latency with one connection (each append alone): a 3 MB note against an empty one, and a full
 * 3 MB drop_oldest note against an empty one in the same server.
 */
async function latencyRows(row: Row): Promise<void> {
  const seconds = Math.max(3, Math.round(DURATION / 2));
  const url = (base: string, name: string) => `${base}/api/v1/notes/by-filename/${name}/append`;
  {
    const dir = join(tmp, "data-size");
    const token = provision(dir);
    const server = await startServer(dir, {});
    await append(server.base, token, "empty.log", "first");
    const block = "y".repeat(100 * 1024 - 1);
    for (let i = 0; i < 30; i++) await append(server.base, token, "big.log", block);
    const empty = wrk(url(server.base, "empty.log"), { token, connections: 1, seconds });
    const big = wrk(url(server.base, "big.log"), { token, connections: 1, seconds });
    await stop(server.proc);
    row("append latency, empty note (1 connection)", `p50 ${f2(empty.p50)} ms`, `p99 ${f2(empty.p99)} ms`, "1.00");
    row("append latency, 3 MB note (1 connection)", `p50 ${f2(big.p50)} ms`, `p99 ${f2(big.p99)} ms`, `${f2(big.p50 / empty.p50)} of empty`);
  }
  // The unlimited profile has no note cap, so nothing would ever drop: this server runs the
  // standard one, whose Team plan caps a note at 3 MB and takes 1,000 appends a minute per token
  // (counted in memory, so from the restart). So wrk stops after a number of answers: after a
  // warm-up, two rounds of 200 on each note, alternating, the empty note measured in the same
  // server the same way; the p50 is the mean of the rounds'.
  {
    const dir = join(tmp, "data-full");
    const token = provision(dir, "team");
    const standard = { NOTESTREAM_LIMIT_PROFILE: "standard" };
    let server = await startServer(dir, standard);
    await append(server.base, token, "empty.log", "first");
    const full = (await (await append(server.base, token, "full.log", "first")).json()) as { id: string };
    await fetch(`${server.base}/api/v1/notes/${full.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ note: { retention: "drop_oldest" } }),
    });
    await stop(server.proc);
    fillWithLines(dir, full.id);
    server = await startServer(dir, standard);
    const run = (name: string, requests: number) => wrk(url(server.base, name), { token, connections: 1, seconds: 2, requests });
    run("empty.log", 50);
    run("full.log", 50);
    const runs = { empty: [] as WrkResult[], full: [] as WrkResult[] };
    for (let round = 0; round < 2; round++) {
      runs.empty.push(run("empty.log", 200));
      runs.full.push(run("full.log", 200));
    }
    const mean = (rs: WrkResult[]): WrkResult => ({
      rps: 0,
      p50: rs.reduce((n, r) => n + r.p50, 0) / rs.length,
      p99: Math.max(...rs.map((r) => r.p99)),
      errors: rs.reduce((n, r) => n + r.errors, 0),
    });
    const empty = mean(runs.empty);
    const dropping = mean(runs.full);
    const note = (await (await fetch(`${server.base}/api/v1/notes/${full.id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      byte_size: number;
    };
    await stop(server.proc);
    if (note.byte_size > 3 * 1024 * 1024 || empty.errors + dropping.errors > 0) process.exitCode = 1;
    row(
      "append latency, full 3 MB drop_oldest note (1 connection)",
      `p50 ${f2(dropping.p50)} ms`,
      `p99 ${f2(dropping.p99)} ms; every append drops the oldest line (${k(note.byte_size)} bytes after); ` +
        `an empty note in the same standard-profile server: p50 ${f2(empty.p50)} ms, p99 ${f2(empty.p99)} ms` +
        (empty.errors + dropping.errors ? `; ${empty.errors + dropping.errors} errors` : ""),
      `${f2(dropping.p50 / empty.p50)} of empty`,
    );
  }
}

/**
 * The search index's cost per append: two servers of this binary at once on their own data dirs,
 * one with the index's triggers dropped (appends then write no index rows, as before the index),
 * and short wrk runs alternating between them (the order too), so the VM's drift falls on both
 * alike. 100-byte log lines of a dozen words (the other rows' line is one word to the index),
 * FULL, 50 connections. The ratio is the median of the pairs'.
 */
async function searchRows(row: Row): Promise<void> {
  const pairs = Math.max(1, Number(process.env.BENCH_SEARCH_PAIRS ?? 6));
  const seconds = Math.max(1, Math.round(DURATION / 3));
  const start = async (label: string, indexed: boolean) => {
    const dir = join(tmp, `data-search-${label}`);
    const token = provision(dir);
    if (!indexed) {
      const db = new Database(join(dir, "notestream.db"));
      dropSearchTriggers(db);
      db.close();
    }
    const server = await startServer(dir, { NOTESTREAM_SYNCHRONOUS: "FULL" });
    await append(server.base, token, "search.log", "warm-up");
    return { ...server, token };
  };
  const servers = { with: await start("with", true), without: await start("without", false) };
  const run = (side: "with" | "without") => wrk(`${servers[side].base}/api/v1/notes/by-filename/search.log/append`, { token: servers[side].token, seconds, text: LOG_LINE });
  const runs = { with: [] as WrkResult[], without: [] as WrkResult[] };
  for (let i = 0; i < pairs; i++) {
    for (const side of i % 2 ? (["without", "with"] as const) : (["with", "without"] as const)) runs[side].push(run(side));
  }
  await stop(servers.with.proc);
  await stop(servers.without.proc);
  const ratios = runs.with.map((r, i) => r.rps / runs.without[i]!.rps);
  const errors = [...runs.with, ...runs.without].reduce((n, r) => n + r.errors, 0);
  if (errors) process.exitCode = 1;
  row(
    "appends with the search index, FULL (50 connections, 100-byte log lines)",
    `${k(pct(runs.with.map((r) => r.rps), 50))} req/s`,
    `without the index ${k(pct(runs.without.map((r) => r.rps), 50))} req/s; p50 ${f2(pct(runs.with.map((r) => r.p50), 50))} against ${f2(pct(runs.without.map((r) => r.p50), 50))} ms, ` +
      `p99 ${f2(pct(runs.with.map((r) => r.p99), 50))} against ${f2(pct(runs.without.map((r) => r.p99), 50))} ms; ${pairs} alternating pairs of ${seconds} s` +
      (errors ? `; ${errors} errors` : ""),
    `${f2(pct(ratios, 50))} of without${ratios.length > 1 ? ` (pairs: ${f2(Math.min(...ratios))}-${f2(Math.max(...ratios))})` : ""}`,
  );
}

/** The writer's commits so far on a server started with NOTESTREAM_METRICS_TOKEN (its /metrics). */
async function commitTally(base: string): Promise<{ commits: number; writes: number }> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })).text();
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return { commits: value("notestream_commit_batch_writes_count"), writes: value("notestream_commit_batch_writes_sum") };
}
const BENCH_METRICS_TOKEN = "bench-metrics-token-0123456789";

/** The machine's CPU time so far, in seconds of all cores: idle (with I/O wait) and in all. */
function machineCpu(): { idle: number; total: number } {
  const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return { idle: (ticks[3]! + ticks[4]!) / 100, total: ticks.reduce((a, b) => a + b, 0) / 100 };
}

/**
 * 9. PostgreSQL: the durable cluster of `scripts/ensure-postgres.sh start --durable` (fsync and
 * synchronous_commit on), a fresh database that the binary migrates, and in each of ROUNDS rounds:
 *   raw commits | appends, one instance, 50 connections | the same with a log line of a dozen words
 *   (LOG_LINE, which PostgreSQL tokenizes inside the batch's transaction) | appends, two instances,
 *   25 connections each at the same time (two wrk processes, summed) | raw commits
 * Raw commits: one connection, one INSERT per transaction, as many as it can in 3 s: what group
 * commit is judged against. Each append run's ratio is taken against the mean of the raw runs
 * before and after it; the table gives the median round and the range. The servers run with
 * /metrics on, read between runs for the writer's commits (writes per commit, commits per second).
 */
async function postgresRows(row: Row): Promise<void> {
  const cluster = await durableCluster();
  if ("unavailable" in cluster) {
    row("PostgreSQL rows", "not measured", cluster.unavailable.replace(/\|/g, "/"), "");
    return;
  }
  const rawSeconds = 3;
  const half = Math.floor(CONNECTIONS / 2);
  try {
    const rawDb = await cluster.createDatabase("raw");
    const url = notestreamUrl(cluster, await cluster.createDatabase("app"));
    const token = provisionPg(BIN, url);
    const env = { NOTESTREAM_METRICS_TOKEN: BENCH_METRICS_TOKEN };
    const appendUrl = (base: string) => `${base}/api/v1/notes/by-filename/bench.log/append`;
    // A fresh server's first second (its pool connecting, the JIT) is not measured.
    const instance = async () => {
      const server = await startPgServer(BIN, url, env);
      await append(server.base, token, "bench.log", "warm-up");
      wrk(appendUrl(server.base), { token, seconds: 1 });
      return server;
    };
    const first = await instance();
    type Run = {
      rps: number;
      p50: number[];
      p99: number[];
      errors: number;
      writesPerCommit: number;
      commitsPerSecond: number;
      /** Cores busy on average: each server's, and PostgreSQL's (NaN when not on this machine). */
      serverCores: number[];
      postgresCores: number;
      /** Cores left idle on the machine meanwhile (wrk's, other processes' and the kernel's use are the rest). */
      idleCores: number;
    };
    const measured = async (servers: { base: string; proc: { pid: number } }[], go: () => WrkResult[] | Promise<WrkResult[]>): Promise<Run> => {
      const before = await Promise.all(servers.map((s) => commitTally(s.base)));
      const cpuBefore = { servers: servers.map((s) => cpuSecondsOf(s.proc.pid)), postgres: cluster.cpuSeconds() ?? NaN, machine: machineCpu() };
      const t0 = performance.now();
      const results = await go();
      const seconds = (performance.now() - t0) / 1000;
      const cpuAfter = { servers: servers.map((s) => cpuSecondsOf(s.proc.pid)), postgres: cluster.cpuSeconds() ?? NaN, machine: machineCpu() };
      const after = await Promise.all(servers.map((s) => commitTally(s.base)));
      const sum = (tallies: { commits: number; writes: number }[], key: "commits" | "writes") => tallies.reduce((n, t) => n + t[key], 0);
      const commits = sum(after, "commits") - sum(before, "commits");
      return {
        rps: results.reduce((n, r) => n + r.rps, 0),
        p50: results.map((r) => r.p50),
        p99: results.map((r) => r.p99),
        errors: results.reduce((n, r) => n + r.errors, 0),
        writesPerCommit: (sum(after, "writes") - sum(before, "writes")) / commits,
        commitsPerSecond: commits / seconds,
        serverCores: cpuAfter.servers.map((c, i) => (c - cpuBefore.servers[i]!) / seconds),
        postgresCores: (cpuAfter.postgres - cpuBefore.postgres) / seconds,
        idleCores: (cpuAfter.machine.idle - cpuBefore.machine.idle) / seconds,
      };
    };
    type PgRound = { raw: [number, number]; one: Run; log: Run; two: Run };
    const rounds: PgRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rawBefore = await rawCommits(cluster, rawDb, rawSeconds);
      const one = await measured([first], () => [wrk(appendUrl(first.base), { token })]);
      const log = await measured([first], () => [wrk(appendUrl(first.base), { token, text: LOG_LINE })]);
      const second = await instance();
      const two = await measured([first, second], () =>
        wrkTogether([first, second].map((s) => ({ url: appendUrl(s.base), opts: { token, connections: half, threads: 1, seconds: DURATION } }))),
      );
      await stop(second.proc);
      const rawAfter = await rawCommits(cluster, rawDb, rawSeconds);
      rounds.push({ raw: [rawBefore, rawAfter], one, log, two });
      const raw = (rawBefore + rawAfter) / 2;
      console.error(
        `PostgreSQL round ${round + 1}/${ROUNDS}: raw ${k(rawBefore)} / ${k(rawAfter)} commits/s, one instance ${k(one.rps)} req/s (${f1(one.rps / raw)}x, ` +
          `${f1(one.writesPerCommit)} writes per commit), two instances ${k(two.rps)} req/s (${f1(two.rps / raw)}x, ${f1(two.writesPerCommit)} writes per commit)`,
      );
    }
    await stop(first.proc);
    const med = (pick: (r: PgRound) => number) => pct(rounds.map(pick), 50);
    const range = (pick: (r: PgRound) => number, fmt: (n: number) => string) =>
      rounds.length > 1 ? ` (rounds: ${fmt(Math.min(...rounds.map(pick)))}-${fmt(Math.max(...rounds.map(pick)))})` : "";
    const raws = rounds.flatMap((r) => r.raw);
    row(
      "raw PostgreSQL, 1 row per commit (1 connection, synchronous_commit on)",
      `${k(pct(raws, 50))} commits/s`,
      `${raws.length} runs of ${rawSeconds} s ${k(Math.min(...raws))}-${k(Math.max(...raws))}, one before and one after each round's append runs`,
      "",
    );
    const names = {
      one: `notestream on PostgreSQL, appends (1 instance, ${CONNECTIONS} connections)`,
      log: `notestream on PostgreSQL, appends of 100-byte log lines (1 instance, ${CONNECTIONS} connections)`,
      two: `notestream on PostgreSQL, appends (2 instances on one database, ${half} connections each at once)`,
    };
    for (const which of ["one", "log", "two"] as const) {
      const errors = rounds.reduce((n, r) => n + r[which].errors, 0);
      if (errors) process.exitCode = 1;
      const overRaw = (r: PgRound) => r[which].rps / ((r.raw[0] + r.raw[1]) / 2);
      const each = (pick: (run: Run) => number[], sep = " and ") => pick(rounds[0]![which]).map((_, i) => f2(med((r) => pick(r[which])[i]!))).join(sep);
      const postgresCores = med((r) => r[which].postgresCores);
      row(
        names[which],
        `${k(med((r) => r[which].rps))} req/s`,
        `${which === "two" ? "summed; " : ""}p50 ${each((run) => run.p50)} ms, p99 ${each((run) => run.p99)} ms; ` +
          `${f1(med((r) => r[which].writesPerCommit))} appends per commit, ${k(med((r) => r[which].commitsPerSecond))} commits/s; ` +
          `CPU: ${which === "two" ? "servers" : "server"} ${each((run) => run.serverCores, " + ")} cores` +
          (Number.isNaN(postgresCores) ? "" : `, PostgreSQL ${f2(postgresCores)} cores`) +
          `, machine idle ${f2(med((r) => r[which].idleCores))} of ${navigator.hardwareConcurrency}` +
          (which === "two" ? `; ${f2(med((r) => r.two.rps / r.one.rps))} of 1 instance` : "") +
          (which === "log" ? `; ${f2(med((r) => r.log.rps / r.one.rps))} of the one-word line's` : "") +
          (errors ? `; ${errors} errors` : ""),
        `${f1(med(overRaw))}x raw commits${range(overRaw, f1)}`,
      );
    }
  } finally {
    await cluster.close();
  }
}

function printTable(rows: string[][], header: string): void {
  const table = ["| measurement | result | detail | ratio |", "|---|---|---|---|", ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
  console.log(`\n${header}\n\n${table}\n`);
}

async function main() {
  const rows: string[][] = [];
  const row = (...cells: string[]) => {
    rows.push(cells);
    console.error(cells.join(" | "));
  };
  if (process.env.BENCH_ONLY === "search") {
    await searchRows(row);
    printTable(rows, `Measured ${new Date().toISOString()} on ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, search row only.`);
    rmSync(tmp, { recursive: true, force: true });
    return;
  }
  if (process.env.BENCH_ONLY === "postgres") {
    await postgresRows(row);
    printTable(rows, `Measured ${new Date().toISOString()} on ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, PostgreSQL rows only, ${DURATION} s per wrk run, median of ${ROUNDS} round${ROUNDS > 1 ? "s" : ""}.`);
    rmSync(tmp, { recursive: true, force: true });
    return;
  }
  if (process.env.BENCH_ONLY === "growth") {
    await growthRows(BIN, row);
    printTable(rows, `Measured ${new Date().toISOString()} on ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, growth rows only.`);
    rmSync(tmp, { recursive: true, force: true });
    return;
  }
  if (process.env.BENCH_ONLY === "latency") {
    await latencyRows(row);
    printTable(rows, `Measured ${new Date().toISOString()} on ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, latency rows only.`);
    rmSync(tmp, { recursive: true, force: true });
    return;
  }

  // 1-3, in rounds. This VM's speed drifts by a third within minutes, so every append run has a
  // ceiling run right before and right after it, and its ratio is taken against the mean of the
  // two; the table gives the median round and the range. Each round:
  //   raw commits FULL and NORMAL | ceiling | durable ceiling | appends FULL | ceiling | appends NORMAL | ceiling
  // The durable ceiling (bench/minimal.ts) is the least a durable append can be here: the same
  // group commit and off-thread fsync with no tokens, limits, checks, counters or log.
  type Round = { ceilings: WrkResult[]; minimal: WrkResult; rawFull: number; rawNormal: number; FULL: WrkResult; NORMAL: WrkResult };
  const rounds: Round[] = [];
  const memory = { idle: 0, peak: 0 };
  const startBare = async (script: string, env: Record<string, string> = {}) => {
    const proc = Bun.spawn([process.execPath, join(ROOT, "bench", script)], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    procs.add(proc);
    return { proc, url: `http://127.0.0.1:${await readPort(proc)}/` };
  };
  for (let round = 0; round < ROUNDS; round++) {
    const rawFull = rawSqlite("FULL", round);
    const rawNormal = rawSqlite("NORMAL", round);
    const ceilingServer = await startBare("ceiling.ts");
    const minimalDir = join(tmp, `minimal-${round}`);
    mkdirSync(minimalDir);
    const minimalServer = await startBare("minimal.ts", { DATA_DIR: minimalDir });
    const appendServer = async (sync: "FULL" | "NORMAL") => {
      const dir = join(tmp, `data-${sync}-${round}`);
      const token = provision(dir);
      const server = await startServer(dir, { NOTESTREAM_SYNCHRONOUS: sync });
      await append(server.base, token, "warm.log", "warm-up");
      return { ...server, token };
    };
    const servers = { FULL: await appendServer("FULL"), NORMAL: await appendServer("NORMAL") };
    if (round === 0) memory.idle = rssKb(servers.FULL.proc.pid).rss;
    const appends = (sync: "FULL" | "NORMAL") =>
      wrk(`${servers[sync].base}/api/v1/notes/by-filename/bench.log/append`, { token: servers[sync].token });
    const ceilings = [wrk(ceilingServer.url)];
    const minimal = wrk(minimalServer.url);
    const FULL = appends("FULL");
    memory.peak = Math.max(memory.peak, rssKb(servers.FULL.proc.pid).peak);
    ceilings.push(wrk(ceilingServer.url));
    const NORMAL = appends("NORMAL");
    ceilings.push(wrk(ceilingServer.url));
    for (const p of [ceilingServer.proc, minimalServer.proc, servers.FULL.proc, servers.NORMAL.proc]) await stop(p);
    const r: Round = { ceilings, minimal, rawFull, rawNormal, FULL, NORMAL };
    rounds.push(r);
    console.error(
      `round ${round + 1}/${ROUNDS}: ceilings ${ceilings.map((c) => k(c.rps)).join(" / ")}, durable ceiling ${k(minimal.rps)} (${f2(ratioOf(r, "minimal"))}), ` +
        `FULL ${k(FULL.rps)} (${f2(ratioOf(r, "FULL"))}), NORMAL ${k(NORMAL.rps)} (${f2(ratioOf(r, "NORMAL"))}), raw FULL ${k(rawFull)}/s (${f1(FULL.rps / rawFull)}x)`,
    );
  }
  /** A run's throughput against the ceilings measured right before and after it. */
  function ratioOf(r: Round, run: "minimal" | "FULL" | "NORMAL"): number {
    const [before, after] = run === "NORMAL" ? [r.ceilings[1]!, r.ceilings[2]!] : [r.ceilings[0]!, r.ceilings[1]!];
    return r[run].rps / ((before.rps + after.rps) / 2);
  }
  const med = (pick: (r: Round) => number) => pct(rounds.map(pick), 50);
  const range = (pick: (r: Round) => number, fmt: (n: number) => string) =>
    rounds.length > 1 ? ` (rounds: ${fmt(Math.min(...rounds.map(pick)))}-${fmt(Math.max(...rounds.map(pick)))})` : "";
  const allCeilings = rounds.flatMap((r) => r.ceilings);
  row(
    "Bun.serve ceiling (parse JSON, answer)",
    `${k(pct(allCeilings.map((c) => c.rps), 50))} req/s`,
    `p50 ${f2(pct(allCeilings.map((c) => c.p50), 50))} ms, p99 ${f2(pct(allCeilings.map((c) => c.p99), 50))} ms; ${allCeilings.length} runs ${k(Math.min(...allCeilings.map((c) => c.rps)))}-${k(Math.max(...allCeilings.map((c) => c.rps)))}`,
    "1.00",
  );
  row("raw SQLite, 1 row per commit, FULL", `${k(med((r) => r.rawFull))} commits/s`, "", "");
  row("raw SQLite, 1 row per commit, NORMAL", `${k(med((r) => r.rawNormal))} commits/s`, "", "");
  row(
    "durable ceiling: bare Bun.serve + group commit + WAL fdatasync (50 connections)",
    `${k(med((r) => r.minimal.rps))} req/s`,
    `p50 ${f2(med((r) => r.minimal.p50))} ms, p99 ${f2(med((r) => r.minimal.p99))} ms`,
    `${f2(med((r) => ratioOf(r, "minimal")))} of ceiling${range((r) => ratioOf(r, "minimal"), f2)}`,
  );
  for (const sync of ["FULL", "NORMAL"] as const) {
    const errors = rounds.reduce((n, r) => n + r[sync].errors, 0);
    const ratio = (r: Round) => ratioOf(r, sync);
    row(
      `notestream appends, ${sync} (50 connections)`,
      `${k(med((r) => r[sync].rps))} req/s`,
      `p50 ${f2(med((r) => r[sync].p50))} ms, p99 ${f2(med((r) => r[sync].p99))} ms${errors ? `, ${errors} errors` : ""}`,
      `${f2(med(ratio))} of ceiling${range(ratio, f2)}`,
    );
  }
  const overRaw = (r: Round) => r.FULL.rps / r.rawFull;
  row("FULL appends against raw FULL commits", "", "", `${f1(med(overRaw))}x${range(overRaw, f1)}`);
  const overMinimal = (r: Round) => r.FULL.rps / r.minimal.rps;
  row("FULL appends against the durable ceiling", "", "", `${f2(med(overMinimal))}${range(overMinimal, f2)}`);

  // 4. Append latency on a 3 MB note and on a full 3 MB drop_oldest note, against an empty one.
  await latencyRows(row);

  // 8 (run here, while the machine is as warm as for the append rows): the search index's cost.
  await searchRows(row);

  // 5. Outbound webhook latency: append sent → delivery received.
  {
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const body = (await req.json()) as { data: { text: string } };
        const t = sentAt.get(body.data.text.trim());
        if (t !== undefined) latencies.push(performance.now() - t);
        return new Response("ok");
      },
    });
    const dir = join(tmp, "data-hook");
    const token = provision(dir);
    const server = await startServer(dir, { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" });
    const first = (await (await append(server.base, token, "hooked.log", "seed")).json()) as { id: string };
    await fetch(`${server.base}/api/v1/notes/${first.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ note: { webhook_url: `http://127.0.0.1:${receiver.port}/hook` } }),
    });
    const N = 300;
    for (let i = 0; i < N; i++) {
      const text = `event-${i}`;
      sentAt.set(text, performance.now());
      await append(server.base, token, "hooked.log", text);
      await Bun.sleep(5);
    }
    const deadline = Date.now() + 10_000;
    while (latencies.length < N && Date.now() < deadline) await Bun.sleep(20);
    await stop(server.proc);
    receiver.stop(true);
    row(
      `webhook, append to receipt (${latencies.length} of ${N})`,
      `p50 ${f2(pct(latencies, 50))} ms`,
      `p99 ${f2(pct(latencies, 99))} ms`,
      "",
    );
  }

  row("RSS, idle after start", `${f1(memory.idle / 1024)} MB`, "", "");
  row("RSS, peak under the FULL append load", `${f1(memory.peak / 1024)} MB`, "", "");

  // 6. Start-up to the first served request (median of 5), on an existing data dir and a fresh one.
  for (const fresh of [false, true]) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const dir = fresh ? join(tmp, `data-start-${i}`) : join(tmp, "data-FULL-0");
      const t0 = performance.now();
      const proc = Bun.spawn([BIN, "serve"], {
        env: { ...process.env, NOTESTREAM_DATA_DIR: dir, NOTESTREAM_PORT: "18765", NOTESTREAM_HOST: "127.0.0.1", NOTESTREAM_LOG_REQUESTS: "false" },
        stdout: "ignore",
        stderr: "ignore",
        stdin: "ignore",
      });
      procs.add(proc);
      for (;;) {
        try {
          if ((await fetch("http://127.0.0.1:18765/up")).ok) break;
        } catch {}
        await Bun.sleep(1);
        if (performance.now() - t0 > 10_000) throw new Error("server did not start");
      }
      times.push(performance.now() - t0);
      await stop(proc);
    }
    row(`start-up to first served request, ${fresh ? "new data dir (migrations)" : "existing data dir"}`, `${f1(pct(times, 50))} ms`, "median of 5", "");
  }

  // 7. kill -9 during appends, then every acknowledged append must be there.
  {
    const dir = join(tmp, "data-kill");
    const token = provision(dir);
    const server = await startServer(dir, { NOTESTREAM_SYNCHRONOUS: "FULL" });
    const acked: string[] = [];
    let n = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const text = `k-${n++}`;
        try {
          if ((await append(server.base, token, "kill.log", text)).ok) acked.push(text);
        } catch {}
      }
    };
    const workers = Array.from({ length: CONNECTIONS }, worker);
    await Bun.sleep(2000);
    server.proc.kill("SIGKILL");
    killed = true;
    await Promise.all(workers);
    await server.proc.exited;
    procs.delete(server.proc);
    const again = await startServer(dir, {});
    const note = (await (await fetch(`${again.base}/api/v1/notes/by-filename/kill.log`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      plain_body: string;
    };
    await stop(again.proc);
    const stored = new Set(note.plain_body.split("\n"));
    const lost = acked.filter((t) => !stored.has(t));
    row("kill -9 during appends, then restart", `${k(acked.length)} acknowledged`, `${lost.length} lost`, lost.length === 0 ? "ok" : "FAILED");
    if (lost.length) process.exitCode = 1;
  }

  // 10. What the same requests cost on an account ten times larger.
  await growthRows(BIN, row);

  // 9. The same binary on PostgreSQL, after every SQLite row.
  if (process.env.BENCH_POSTGRES !== "0") await postgresRows(row);

  const table = [
    "| measurement | result | detail | ratio |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
  const header =
    `Measured ${new Date().toISOString()} on ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, ${DURATION} s per wrk run, ` +
    `the first nine rows are the median of ${ROUNDS} round${ROUNDS > 1 ? "s" : ""} (each append run between two ceiling runs, its ratio against their mean)` +
    (process.env.BENCH_POSTGRES !== "0" ? `, and so are the PostgreSQL rows (each round's append runs between two raw-commit runs).` : ".");
  console.log(`\n${header}\n\n${table}\n`);
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "latest.md"), `${header}\n\n${table}\n`);
  rmSync(tmp, { recursive: true, force: true });
}

await main();
