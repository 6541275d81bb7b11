/**
 * Shared helpers for the end-to-end tests of the real single-file executable (test/e2e/*.test.ts):
 * building it with `bun build --compile`, running its CLI and `serve` from empty working
 * directories with a clean environment, talking to it over real HTTP, and cleaning up.
 *
 * Each test file calls `buildBinary()` in its beforeAll and `cleanup()` in its afterAll; nothing
 * here relies on state surviving from one test file to the next (the build is shared, but only
 * when its sources are the same: buildBinary).
 */
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestDatabase } from "./postgres";

export const ROOT = join(import.meta.dir, "..", "..");
export const BUILD_TIMEOUT_MS = 60_000;
export const START_TIMEOUT_MS = 10_000;
export const EXIT_TIMEOUT_MS = 10_000;
export const FETCH_TIMEOUT_MS = 10_000;

let BIN = "";
const tempDirs: string[] = [];
const liveProcs = new Set<Subprocess>();

/**
 * The suite runs on SQLite, and again on PostgreSQL with NOTESTREAM_DATABASE_URL set in the test
 * process (as test/helpers/harness.ts's onPostgres). Then every data dir handed to a child (cli,
 * cliOk, provision, startServer, or childEnv with NOTESTREAM_DATA_DIR) gets a PostgreSQL database
 * of its own, a copy of the migrated template, and the child gets its NOTESTREAM_DATABASE_URL
 * (unless the test passes one of its own, which wins). The same data dir always maps to the same
 * database, so a restart of the binary on it finds its data. `cli` is synchronous (spawnSync), so a
 * data dir's database is made synchronously on first use, by a child process
 * (postgres.ts freshDatabaseSync); making it in an async step would mean an await before every
 * `cli` of a new data dir in every test. The template is made once, when this module loads.
 */
export const onPostgres = Boolean(process.env.NOTESTREAM_DATABASE_URL);
// Imported only on the PostgreSQL run: on SQLite, importing it would look for (or start) a server.
const postgres = onPostgres ? await import("./postgres") : null;
if (postgres?.hasPostgres) await postgres.prepareMigratedTemplate();
const databases = new Map<string, TestDatabase>();

/** On the PostgreSQL run, this data dir's database (made on first use; `sql` to read it), null on SQLite. */
export function databaseOf(dataDir: string): TestDatabase | null {
  if (!postgres) return null;
  const key = resolve(dataDir);
  let db = databases.get(key);
  if (!db) databases.set(key, (db = postgres.freshDatabaseSync({ migrated: true })));
  return db;
}

/** On the PostgreSQL run, the NOTESTREAM_DATABASE_URL the binary gets for this data dir; "" on SQLite. */
export function databaseUrlFor(dataDir: string): string {
  const db = databaseOf(dataDir);
  return db ? `${db.url}?sslmode=disable` : "";
}

// ---------------------------------------------------------------------------------------------
// Build and clean-up
// ---------------------------------------------------------------------------------------------

const BUILD_FLAGS = ["--compile", "--bytecode", "--minify-whitespace", "--minify-syntax"];
/** Everything `bun build` reads besides node_modules, which bun.lock pins. */
const BUILD_INPUTS = ["src", "migrations", "migrations-pg", "package.json", "bun.lock", "tsconfig.json", "bunfig.toml"];
/** Builds of other sources not used for this long are deleted when a new one is made (each is ~150 MB). */
const BUILD_KEPT_MS = 20 * 60 * 1000;
const BUILDS = join(tmpdir(), `notestream-e2e-bin-${process.getuid?.() ?? "user"}`);

/**
 * Builds the binary with the same flags as `make build`, makes it the one `cli`, `cliOk`,
 * `provision` and `startServer` run, and returns its path: a directory holding that one file.
 *
 * A build costs seconds of both cores and every e2e file needs the same one, so it is made once
 * per state of its sources and shared by the files of a run, and by both passes of `make test`:
 * its directory is named by a hash of everything the build reads (BUILD_INPUTS), Bun's version and
 * the flags, so a changed source builds again. It is made under another name and renamed, so a
 * run that finds it finds it whole.
 */
export function buildBinary(): string {
  const key = buildKey();
  const dir = join(BUILDS, key);
  const outfile = join(dir, "notestream");
  if (existsSync(outfile)) {
    utimesSync(dir, new Date(), new Date());
  } else {
    mkdirSync(BUILDS, { recursive: true });
    const building = mkdtempSync(join(BUILDS, `${key}.building-`));
    const r = Bun.spawnSync([process.execPath, "build", ...BUILD_FLAGS, "src/main.ts", "--outfile", join(building, "notestream")], {
      cwd: ROOT,
      env: childEnv({}),
      stdout: "pipe",
      stderr: "pipe",
      timeout: BUILD_TIMEOUT_MS,
    });
    if (r.exitCode !== 0 || !existsSync(join(building, "notestream"))) {
      rmSync(building, { recursive: true, force: true });
      throw new Error(`bun build --compile failed (exit ${r.exitCode}):\n${r.stderr.toString()}\n${r.stdout.toString()}`);
    }
    try {
      renameSync(building, dir);
    } catch {
      // Another run made the same build meanwhile: theirs is as good.
      rmSync(building, { recursive: true, force: true });
    }
    forgetOldBuilds(key);
  }
  BIN = outfile;
  return outfile;
}

function buildKey(): string {
  const hash = new Bun.CryptoHasher("sha256");
  hash.update(`${Bun.version}\0${BUILD_FLAGS.join(" ")}\0`);
  for (const input of BUILD_INPUTS) {
    const path = join(ROOT, input);
    if (!existsSync(path)) continue;
    const files = statSync(path).isDirectory() ? readdirSync(path, { recursive: true, encoding: "utf8" }).map((f) => join(input, f)).sort() : [input];
    for (const file of files) {
      const full = join(ROOT, file);
      if (!statSync(full).isFile()) continue;
      hash.update(`${file}\0`);
      hash.update(readFileSync(full));
      hash.update("\0");
    }
  }
  return hash.digest("hex").slice(0, 20);
}

function forgetOldBuilds(keep: string): void {
  for (const name of readdirSync(BUILDS)) {
    if (name === keep) continue;
    const path = join(BUILDS, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > BUILD_KEPT_MS) rmSync(path, { recursive: true, force: true });
    } catch {}
  }
}

/** Kills every process still running, removes every temp dir and forgets the binary (its build stays for the next file). */
export async function cleanup(): Promise<void> {
  const procs = [...liveProcs];
  for (const proc of procs) proc.kill("SIGKILL");
  await Promise.all(procs.map((p) => withTimeout(p.exited, 5_000, "a leftover server to die").catch(() => {})));
  liveProcs.clear();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  const dbs = [...databases.values()];
  databases.clear();
  await Promise.all(dbs.map((db) => db.drop()));
  BIN = "";
}

function bin(): string {
  if (!BIN) throw new Error("the binary is not built: call buildBinary() in beforeAll");
  return BIN;
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/** A fresh empty temp dir, removed by `cleanup()`. */
export function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `notestream-e2e-${label}-`));
  tempDirs.push(dir);
  return dir;
}

/**
 * The test runner's environment without NOTESTREAM_*, INPUT_*, GITHUB_* and RUNNER_* variables
 * (the suite may itself run inside GitHub Actions), plus the given ones; on the PostgreSQL run, a
 * given NOTESTREAM_DATA_DIR brings its database's NOTESTREAM_DATABASE_URL unless one is given.
 */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(NOTESTREAM_|INPUT_|GITHUB_|RUNNER_)/.test(k)) env[k] = v;
  }
  const dataDir = extra.NOTESTREAM_DATA_DIR;
  if (onPostgres && dataDir && extra.NOTESTREAM_DATABASE_URL === undefined) env.NOTESTREAM_DATABASE_URL = databaseUrlFor(dataDir);
  return { ...env, ...extra };
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Polls until the condition holds; bounded in time. */
export async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The working directory it ran in (fresh and empty beforehand). */
  cwd: string;
}

/** Runs the binary with a CLI command, from a fresh empty working directory. */
export function cli(args: string[], env: Record<string, string> = {}): CliResult {
  const cwd = tempDir("cwd");
  const r = Bun.spawnSync([bin(), ...args], { cwd, env: childEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 20_000 });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString(), cwd };
}

/** Runs a CLI command against a data dir and asserts it succeeded. */
export function cliOk(dataDir: string, args: string[]): CliResult {
  const r = cli(args, { NOTESTREAM_DATA_DIR: dataDir });
  if (r.code !== 0) throw new Error(`notestream ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** A dev-plan account and a read,write token for it, made with the binary's own CLI. */
export function provision(dataDir: string, email = "ops@example.com"): { email: string; token: string } {
  cliOk(dataDir, ["account", "create", "--email", email, "--plan", "dev"]);
  const token = cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read,write"]).stdout.trim();
  return { email, token };
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  }
  buf += decoder.decode();
  if (buf.length > 0) onLine(buf);
}

export type ServerProc = Subprocess<"ignore", "pipe", "pipe">;

export interface RunningServer {
  proc: ServerProc;
  port: number;
  base: string;
  /** Every stdout line so far. */
  logs: string[];
  stderr: () => string;
  /** Sends the signal and resolves with the exit code once the process is gone and its output read. */
  stop: (signal?: "SIGTERM" | "SIGINT" | "SIGKILL") => Promise<number | null>;
}

/** Starts `serve` on a free port; resolves once it has logged its "listening" line. */
export async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const proc: ServerProc = Bun.spawn([bin(), "serve"], {
    cwd: tempDir("cwd"),
    env: childEnv({ NOTESTREAM_DATA_DIR: dataDir, NOTESTREAM_PORT: "0", NOTESTREAM_HOST: "127.0.0.1", ...env }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  liveProcs.add(proc);
  void proc.exited.then(() => liveProcs.delete(proc));

  const logs: string[] = [];
  let stderr = "";
  let onListening!: (port: number) => void;
  const listening = new Promise<number>((resolve) => (onListening = resolve));
  const stdoutDone = readLines(proc.stdout, (line) => {
    logs.push(line);
    try {
      const j = JSON.parse(line) as { msg?: unknown; port?: unknown };
      if (j.msg === "listening" && typeof j.port === "number") onListening(j.port);
    } catch {}
  });
  const stderrDone = readLines(proc.stderr, (line) => (stderr += `${line}\n`));
  const drained = Promise.all([stdoutDone, stderrDone]).then(() => undefined);

  const stop = async (signal: "SIGTERM" | "SIGINT" | "SIGKILL" = "SIGTERM") => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await withTimeout(proc.exited, EXIT_TIMEOUT_MS, `the server to exit after ${signal}`).catch((e) => {
      proc.kill("SIGKILL");
      throw e;
    });
    await withTimeout(drained, EXIT_TIMEOUT_MS, "the server's output to close");
    return proc.exitCode;
  };

  let port: number;
  try {
    port = await withTimeout(
      Promise.race([
        listening,
        proc.exited.then((code) => {
          throw new Error(`serve exited with ${code} before listening`);
        }),
      ]),
      START_TIMEOUT_MS,
      "the listening log line",
    );
  } catch (e) {
    proc.kill("SIGKILL");
    await withTimeout(proc.exited, EXIT_TIMEOUT_MS, "the failed server to die").catch(() => {});
    await withTimeout(drained, EXIT_TIMEOUT_MS, "the failed server's output").catch(() => {});
    throw new Error(`${(e as Error).message}\nstdout:\n${logs.join("\n")}\nstderr:\n${stderr}`);
  }
  return { proc, port, base: `http://127.0.0.1:${port}`, logs, stderr: () => stderr, stop };
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

export async function request(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  // The status is the acknowledgement; a body cut off by a dying server does not undo it.
  const body = await res.json().catch(() => null);
  return { status: res.status, headers: res.headers, body };
}

export const appendPath = (filename: string) => `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`;
export const notePath = (filename: string) => `/api/v1/notes/by-filename/${encodeURIComponent(filename)}`;

export function append(base: string, token: string, filename: string, text: string): Promise<Answer> {
  return request(base, "POST", appendPath(filename), { token, json: { text } });
}

/** The note with that filename, as the API shows it; throws unless the answer is 200. */
export async function getNote(base: string, token: string, filename: string): Promise<any> {
  const r = await request(base, "GET", notePath(filename), { token });
  if (r.status !== 200) throw new Error(`GET ${filename}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The plain body of the stream note with that filename. */
export async function readStream(base: string, token: string, filename: string): Promise<string> {
  return (await getNote(base, token, filename)).plain_body as string;
}
