/**
 * What the benchmark scripts share: a temp dir and the processes to kill on exit, wrk with the
 * append's POST, and a notestream binary provisioned and served on a temp data dir.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const LINE = "x".repeat(100);
/** A 100-byte log line of a dozen words: what the search index's cost is measured with (LINE is one word to it). */
export const LOG_LINE = "2026-11-23T01:16:00Z INFO web-3 deploy 4f2a1c ok in 42s user=alice req=9f8e7d6c took 12ms".padEnd(100, " #");
/** LOG_LINE's kind in a European language, with Latin letters beyond ASCII (pg-vector.ts handles them apart). */
export const LATIN_LOG_LINE = "2026-11-23T01:16:00Z INFO paiement reçu de Hélène Müller, commande n° 4f2a1c — Straße".padEnd(100, " #");
export const CONNECTIONS = 50;
export const tmp = mkdtempSync(join(tmpdir(), "notestream-bench-"));
export const procs = new Set<Subprocess>();
process.on("exit", () => procs.forEach((p) => p.kill("SIGKILL")));

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text)!;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
}

export interface WrkOptions {
  token?: string;
  connections?: number;
  threads?: number;
  seconds: number;
  requests?: number;
  text?: string;
}

/** wrk's command line for a POST of the JSON line (its Lua script written to the temp dir). */
function wrkCommand(url: string, opts: WrkOptions): string[] {
  const script = join(tmp, `wrk-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      'wrk.headers["Content-Type"] = "application/json"',
      opts.token ? `wrk.headers["Authorization"] = "Bearer ${opts.token}"` : "",
      `wrk.body = [[${JSON.stringify({ text: opts.text ?? LINE })}]]`,
      opts.requests
        ? `local n = 0\nresponse = function() n = n + 1; if n >= ${opts.requests} then wrk.thread:stop() end end`
        : "",
    ].join("\n"),
  );
  const c = opts.connections ?? CONNECTIONS;
  return ["wrk", `-t${opts.threads ?? Math.min(2, c)}`, `-c${c}`, `-d${opts.seconds}s`, "--latency", "-s", script, url];
}

/**
 * Runs wrk with a POST of the JSON line; returns requests/s and latency percentiles in ms.
 * `requests`: stop after about that many answers (under a plan's rate limit), else run `seconds`.
 */
export function wrk(url: string, opts: WrkOptions): WrkResult {
  const r = Bun.spawnSync(wrkCommand(url, opts), { stdout: "pipe", stderr: "pipe" });
  return wrkResult(r.exitCode, r.stdout.toString(), r.stderr.toString());
}

/** Several wrk runs at the same time (each its own process), e.g. one per server instance. */
export async function wrkTogether(runs: { url: string; opts: WrkOptions }[]): Promise<WrkResult[]> {
  const running = runs.map(({ url, opts }) => Bun.spawn(wrkCommand(url, opts), { stdout: "pipe", stderr: "pipe", stdin: "ignore" }));
  return Promise.all(
    running.map(async (p) => {
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return wrkResult(code, out, err);
    }),
  );
}

function wrkResult(exitCode: number | null, out: string, stderr: string): WrkResult {
  if (exitCode !== 0 || !/Requests\/sec/.test(out)) throw new Error(`wrk failed: ${out}${stderr}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
    p50: ms(/^\s+50%\s+(\S+)\s*$/m.exec(out)![1]!),
    p99: ms(/^\s+99%\s+(\S+)\s*$/m.exec(out)![1]!),
    errors: Number(non2xx?.[1] ?? 0) + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  };
}

export async function readPort(proc: Subprocess<"ignore", "pipe", "pipe">): Promise<number> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value);
    const m = /"port":(\d+)/.exec(buf);
    if (m) {
      // Keep draining stdout (the request log) so the server never blocks on a full pipe.
      void (async () => {
        for (;;) if ((await reader.read()).done) break;
      })();
      return Number(m[1]);
    }
  }
  throw new Error(`no listening line: ${buf}`);
}

/**
 * Starts the binary with its request log going to a file: a pipe that this process (blocked in
 * wrk) stopped reading would make the server buffer its log in memory and distort its RSS.
 */
export async function startServer(bin: string, dataDir: string, env: Record<string, string> = {}) {
  const logPath = join(tmp, `server-${Math.random().toString(36).slice(2)}.log`);
  const proc = Bun.spawn([bin, "serve"], {
    env: { ...process.env, NOTESTREAM_DATA_DIR: dataDir, NOTESTREAM_PORT: "0", NOTESTREAM_HOST: "127.0.0.1", NOTESTREAM_LIMIT_PROFILE: "unlimited", ...env },
    stdout: Bun.file(logPath),
    stderr: "inherit",
    stdin: "ignore",
  });
  procs.add(proc);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const m = /"port":(\d+)/.exec(await Bun.file(logPath).text().catch(() => ""));
    if (m) return { proc, port: Number(m[1]), base: `http://127.0.0.1:${m[1]}` };
    if (Date.now() > deadline) throw new Error("the server did not start");
    await Bun.sleep(5);
  }
}

function cli(bin: string, dataDir: string, args: string[], env: Record<string, string> = {}): string {
  const r = Bun.spawnSync([bin, ...args], { env: { ...process.env, NOTESTREAM_DATA_DIR: dataDir, ...env }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`notestream ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString().trim();
}

/**
 * A Dev (or `plan`) account and a read,write token for it, made with the binary's own command line
 * (`env`: NOTESTREAM_DATABASE_URL for PostgreSQL).
 */
export function provision(bin: string, dataDir: string, plan = "dev", env: Record<string, string> = {}): string {
  cli(bin, dataDir, ["account", "create", "--email", "bench@example.com", "--plan", plan], env);
  return cli(bin, dataDir, ["token", "create", "--email", "bench@example.com", "--scope", "read,write"], env);
}

/**
 * The database as it was before the search index: its triggers dropped, and the indexer's
 * watermark (migrations/0019) past any chunk, so its passes find nothing to index: appends write
 * no index rows (the index's tables stay, unread). For measuring what the index costs an append,
 * never for a database in use: its index no longer follows the text.
 */
export function dropSearchTriggers(sqlite: { query(sql: string): { all(): unknown[] }; run(sql: string): unknown }): void {
  const triggers = sqlite.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search\\_%' ESCAPE '\\'").all() as { name: string }[];
  if (triggers.length === 0) throw new Error("no search triggers: is this a build with the search index?");
  for (const t of triggers) sqlite.run(`DROP TRIGGER "${t.name}"`);
  const watermark = sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'search_chunks_indexed'").all();
  if (watermark.length > 0) sqlite.run("UPDATE search_chunks_indexed SET through = 9223372036854775807");
}

export async function stop(proc: Subprocess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  proc.kill(signal);
  await proc.exited;
  procs.delete(proc);
}
