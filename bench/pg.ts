/**
 * PostgreSQL for the benchmarks: the durable cluster of `scripts/ensure-postgres.sh start --durable`
 * (fsync, synchronous_commit and full_page_writes on, as a production server), fresh databases on
 * it, raw single-row commits, and notestream binaries serving from it.
 */
import { SQL } from "bun";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LINE, provision, ROOT, startServer, tmp } from "./lib";

const SCRIPT = join(ROOT, "scripts", "ensure-postgres.sh");

/** The bench cluster's server. */
export interface PgCluster {
  /** postgres://user@host:port/<database>, with the database left to `urlOf`. */
  urlOf(database: string): string;
  /** A new empty database named after this process (so a killed run's are recognised and swept). */
  createDatabase(label: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** CPU seconds the server's processes (the postmaster and its children) have used; null when it is not on this machine. */
  cpuSeconds(): number | null;
  /** Drops this run's databases and, when this run started the cluster, stops it and deletes its files. */
  close(): Promise<void>;
}

/**
 * Starts the durable cluster (or finds it running, or takes NOTESTREAM_BENCH_DATABASE_URL's
 * server, reached without TLS); `unavailable` with the reason when no PostgreSQL can be had.
 */
export async function durableCluster(): Promise<PgCluster | { unavailable: string }> {
  const r = Bun.spawnSync(["bash", SCRIPT, "start", "--durable"], { stdout: "pipe", stderr: "pipe" });
  const url = r.stdout.toString().trim();
  const said = r.stderr.toString().trim();
  if (r.exitCode !== 0 || !url) return { unavailable: said.split("\n").pop() || `ensure-postgres.sh exited ${r.exitCode}` };
  const startedHere = /started a throwaway durable PostgreSQL/.test(said);
  const base = new URL(url);
  const urlOf = (database: string) => {
    const u = new URL(base);
    u.pathname = `/${database}`;
    u.search = "";
    return u.toString();
  };
  const admin = new SQL({ url, max: 1, tls: false });
  const settings = (await admin`SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit')`) as { name: string; setting: string }[];
  const off = settings.filter((s) => s.setting !== "on");
  if (off.length) throw new Error(`the bench's PostgreSQL must sync every commit, but ${off.map((s) => `${s.name} = ${s.setting}`).join(", ")}`);
  // Databases of earlier runs that were killed before dropping theirs.
  const prefix = "notestream_bench_";
  for (const { datname } of (await admin`SELECT datname FROM pg_database WHERE datname LIKE ${`${prefix}%`}`) as { datname: string }[]) {
    const pid = Number(/^notestream_bench_(\d+)_/.exec(datname)?.[1]);
    if (pid && pid !== process.pid && !alive(pid)) await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
  const [{ data_directory }] = (await admin`SELECT current_setting('data_directory') AS data_directory`) as [{ data_directory: string }];
  const pidFile = join(data_directory, "postmaster.pid");
  const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : 0;
  const mine = new Set<string>();
  const drop = async (name: string) => {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    mine.delete(name);
  };
  return {
    urlOf,
    async createDatabase(label) {
      const name = `${prefix}${process.pid}_${label}_${mine.size}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
      await admin.unsafe(`CREATE DATABASE "${name}"`);
      mine.add(name);
      return name;
    },
    dropDatabase: drop,
    cpuSeconds() {
      if (!postmaster || !existsSync(`/proc/${postmaster}`)) return null;
      let total = cpuSecondsOf(postmaster);
      for (const entry of readdirSync("/proc")) {
        if (/^\d+$/.test(entry) && statFields(Number(entry))?.[1] === String(postmaster)) total += cpuSecondsOf(Number(entry));
      }
      return total;
    },
    async close() {
      for (const name of [...mine]) await drop(name);
      await admin.close();
      if (startedHere) Bun.spawnSync(["bash", SCRIPT, "stop", "--durable"], { stdout: "ignore", stderr: "inherit" });
    },
  };
}

/** The fields of /proc/<pid>/stat after the command's name (state, ppid, …), or null when it has gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** CPU seconds (user + system, all threads) a process has used so far; 0 when it has gone. */
export function cpuSecondsOf(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / 100 : 0;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

/**
 * Single-row commits per second on one connection: one INSERT of the 100-byte line per
 * transaction (an INSERT on its own, so one round trip each), for `seconds`, through Bun's
 * PostgreSQL client (the one notestream uses), into a table of its own in `database`.
 */
export async function rawCommits(cluster: PgCluster, database: string, seconds: number): Promise<number> {
  const db = new SQL({ url: cluster.urlOf(database), max: 1, tls: false });
  try {
    await db.unsafe("CREATE TABLE IF NOT EXISTS raw_commits (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text NOT NULL)");
    const [{ synchronous_commit }] = (await db`SHOW synchronous_commit`) as [{ synchronous_commit: string }];
    if (synchronous_commit !== "on") throw new Error(`synchronous_commit is ${synchronous_commit}`);
    let n = 0;
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      await db`INSERT INTO raw_commits (v) VALUES (${LINE})`;
      n++;
    }
    return n / seconds;
  } finally {
    await db.close();
  }
}

/** The URL notestream is given for `database` (no TLS on loopback). */
export const notestreamUrl = (cluster: PgCluster, database: string) => `${cluster.urlOf(database)}?sslmode=disable`;

/**
 * A Dev account and a read,write token on the PostgreSQL database, made with the binary's own
 * command line (which migrates the database first, as `serve` would).
 */
export function provisionPg(bin: string, databaseUrl: string, plan = "dev"): string {
  const dataDir = join(tmp, `pg-cli-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dataDir, { recursive: true });
  return provision(bin, dataDir, plan, { NOTESTREAM_DATABASE_URL: databaseUrl });
}

/**
 * The binary serving from PostgreSQL, with a data dir of its own (request log, pid file; the
 * database holds everything else), as each of several instances on separate machines would.
 */
export async function startPgServer(bin: string, databaseUrl: string, env: Record<string, string> = {}) {
  const dataDir = join(tmp, `pg-data-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dataDir, { recursive: true });
  return startServer(bin, dataDir, { NOTESTREAM_DATABASE_URL: databaseUrl, ...env });
}
