/**
 * Two builds (or two settings) of the server under wrk, side by side: both run at once on their
 * own data dirs, and short wrk runs alternate between them, so the VM's drift (a third within
 * minutes) falls on both alike. Prints each pair's ratio and the median.
 *
 *   bun bench/ab-wrk.ts /tmp/base/dist/notestream dist/notestream
 *   AB_ENV_B=NOTESTREAM_LOG_REQUESTS=false bun bench/ab-wrk.ts dist/notestream dist/notestream
 *
 * Environment: AB_PAIRS (default 8), AB_SECONDS per run (default 3), AB_SYNC (FULL),
 * AB_ENV_A / AB_ENV_B (extra NAME=value,NAME=value for one side), AB_PG=1: both sides serve from
 * PostgreSQL instead, each from a fresh database of its own on the durable bench cluster
 * (`scripts/ensure-postgres.sh start --durable`, fsync and synchronous_commit on; bench/pg.ts);
 * AB_SQL_A / AB_SQL_B: SQL run on that side's PostgreSQL database once it is provisioned (a schema
 * change tried before it becomes a migration); AB_TEXT_A / AB_TEXT_B=log: that side appends
 * bench/lib.ts's LOG_LINE (a log line of a dozen words) instead of LINE (one 100-letter word),
 * =latin its LATIN_LOG_LINE (the same in French, letters with accents). AB_NOTE_A / AB_NOTE_B: note
 * fields as JSON, PATCHed on that side's stream before the runs (e.g. its rules or notify list:
 * AB_NOTE_B='{"rules": [{"match": "ERROR", "then": "fail"}]}').
 */
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { LATIN_LOG_LINE, LOG_LINE, procs, provision, startServer, stop, tmp, wrk } from "./lib";
import { durableCluster, notestreamUrl, provisionPg, startPgServer, type PgCluster } from "./pg";

const [binA, binB] = process.argv.slice(2).map((p) => resolve(p));
if (!binA || !binB) {
  console.error("usage: bun bench/ab-wrk.ts <binary A> <binary B>");
  process.exit(2);
}
const PAIRS = Number(process.env.AB_PAIRS ?? 8);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);

function envList(raw: string | undefined): Record<string, string> {
  return Object.fromEntries((raw ?? "").split(",").filter(Boolean).map((kv) => kv.split("=", 2) as [string, string]));
}

let cluster: PgCluster | null = null;
if (process.env.AB_PG === "1") {
  const found = await durableCluster();
  if ("unavailable" in found) {
    console.error(`AB_PG=1, but no PostgreSQL: ${found.unavailable}`);
    process.exit(1);
  }
  cluster = found;
}

async function start(label: string, bin: string, env: Record<string, string>): Promise<() => number> {
  let token: string;
  let server: { base: string };
  if (cluster) {
    const url = notestreamUrl(cluster, await cluster.createDatabase(`ab_${label}`));
    token = provisionPg(bin, url);
    const extra = process.env[`AB_SQL_${label.toUpperCase()}`];
    if (extra) {
      const sql = new Bun.SQL(url);
      await sql.unsafe(extra).simple();
      await sql.close();
    }
    server = await startPgServer(bin, url, env);
  } else {
    const dataDir = join(tmp, label);
    token = provision(bin, dataDir);
    server = await startServer(bin, dataDir, { NOTESTREAM_SYNCHRONOUS: process.env.AB_SYNC ?? "FULL", ...env });
  }
  const fields = process.env[`AB_NOTE_${label.toUpperCase()}`];
  if (fields) await patchStream(server.base, token, label, JSON.parse(fields));
  const texts: Record<string, string> = { log: LOG_LINE, latin: LATIN_LOG_LINE };
  const text = texts[process.env[`AB_TEXT_${label.toUpperCase()}`] ?? ""];
  return () => wrk(`${server.base}/api/v1/notes/by-filename/ab.log/append`, { token, seconds: SECONDS, text }).rps;
}

/** Creates the side's stream with one line, then sets the given fields on it. */
async function patchStream(base: string, token: string, label: string, note: Record<string, unknown>): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await fetch(`${base}/api/v1/notes/by-filename/ab.log/append`, { method: "POST", headers, body: JSON.stringify({ text: "set up" }) });
  const { id } = (await created.json()) as { id: string };
  const res = await fetch(`${base}/api/v1/notes/${id}`, { method: "PATCH", headers, body: JSON.stringify({ note }) });
  if (!res.ok) throw new Error(`AB_NOTE_${label.toUpperCase()}: ${res.status} ${await res.text()}`);
}

const runA = await start("a", binA, envList(process.env.AB_ENV_A));
const runB = await start("b", binB, envList(process.env.AB_ENV_B));
const ratios: number[] = [];
for (let i = 0; i < PAIRS; i++) {
  // Alternate which goes first, so a drift within a pair favours neither.
  let a: number;
  let b: number;
  if (i % 2) {
    a = runA();
    b = runB();
  } else {
    b = runB();
    a = runA();
  }
  ratios.push(b / a);
  console.log(`pair ${i + 1}: A ${Math.round(a)} req/s, B ${Math.round(b)} req/s, B/A ${(b / a).toFixed(3)}`);
}
const sorted = [...ratios].sort((x, y) => x - y);
console.log(`B/A median ${sorted[sorted.length >> 1]!.toFixed(3)}, B faster in ${ratios.filter((r) => r > 1).length} of ${PAIRS} pairs`);
for (const p of [...procs]) await stop(p);
await cluster?.close();
rmSync(tmp, { recursive: true, force: true });
