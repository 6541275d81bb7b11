/**
 * The GitHub Action (action.yml + action/append.sh) against the real compiled binary: the binary
 * is built once with `bun build --compile`, `serve` runs on a temp data dir with a Dev account
 * and tokens made with its own CLI, and the script runs under bash with the INPUT_* and GITHUB_*
 * variables GitHub would set. Self-contained: the helpers are a minimal copy of binary.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const SCRIPT = join(ROOT, "action", "append.sh");
const BUILD_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 10_000;
const FETCH_TIMEOUT_MS = 10_000;
const SCRIPT_TIMEOUT_MS = 20_000;

let BIN = "";
const tempDirs: string[] = [];
const liveProcs = new Set<Subprocess>();

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `notestream-action-${label}-`));
  tempDirs.push(dir);
  return dir;
}

/**
 * The test runner's environment without NOTESTREAM_*, INPUT_* and GITHUB_* variables (the suite
 * may itself run inside GitHub Actions), plus the given ones.
 */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(NOTESTREAM_|INPUT_|GITHUB_|RUNNER_)/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Runs a CLI command of the binary against a data dir, from an empty working directory, and asserts it succeeded. */
function cliOk(dataDir: string, args: string[]): string {
  const r = Bun.spawnSync([BIN, ...args], {
    cwd: tempDir("cwd"),
    env: childEnv({ NOTESTREAM_DATA_DIR: dataDir }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 20_000,
  });
  if (r.exitCode !== 0) throw new Error(`notestream ${args.join(" ")} exited ${r.exitCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout.toString();
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

type ServerProc = Subprocess<"ignore", "pipe", "pipe">;

interface RunningServer {
  proc: ServerProc;
  base: string;
  logs: string[];
  stderr: () => string;
  stop: (signal?: "SIGTERM" | "SIGKILL") => Promise<number | null>;
}

/** Starts `serve` on a free port; resolves once it has logged its "listening" line. */
async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const proc: ServerProc = Bun.spawn([BIN, "serve"], {
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

  const stop = async (signal: "SIGTERM" | "SIGKILL" = "SIGTERM") => {
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
  return { proc, base: `http://127.0.0.1:${port}`, logs, stderr: () => stderr, stop };
}

async function getJson(path: string, token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

const notePath = (filename: string) => `/api/v1/notes/by-filename/${encodeURIComponent(filename)}`;

async function readNote(filename: string): Promise<any> {
  const r = await getJson(notePath(filename), rwToken);
  if (r.status !== 200) throw new Error(`GET ${filename}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the script appended to $GITHUB_OUTPUT. */
  output: string;
}

/** Runs `bash action/append.sh` with the given INPUT_* / GITHUB_* variables, as the composite step does. */
function runAction(vars: Record<string, string>): ScriptResult {
  const dir = tempDir("run");
  const outputFile = join(dir, "github_output");
  writeFileSync(outputFile, "");
  const r = Bun.spawnSync(["bash", SCRIPT], {
    cwd: dir,
    env: childEnv({ GITHUB_OUTPUT: outputFile, ...vars }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: SCRIPT_TIMEOUT_MS,
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString(), output: readFileSync(outputFile, "utf8") };
}

const describeRun = (r: ScriptResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

// ---------------------------------------------------------------------------------------------
// Build, server and clean-up
// ---------------------------------------------------------------------------------------------

let server: RunningServer;
let rwToken = "";
let readToken = "";

beforeAll(async () => {
  const outDir = tempDir("bin");
  const outfile = join(outDir, "notestream");
  const r = Bun.spawnSync([process.execPath, "build", "--compile", "--bytecode", "--minify-whitespace", "--minify-syntax", "src/main.ts", "--outfile", outfile], {
    cwd: ROOT,
    env: childEnv({}),
    stdout: "pipe",
    stderr: "pipe",
    timeout: BUILD_TIMEOUT_MS,
  });
  if (r.exitCode !== 0 || !existsSync(outfile)) {
    throw new Error(`bun build --compile failed (exit ${r.exitCode}):\n${r.stderr.toString()}\n${r.stdout.toString()}`);
  }
  BIN = outfile;

  const dataDir = tempDir("data");
  const email = "ci@example.com";
  cliOk(dataDir, ["account", "create", "--email", email, "--plan", "dev"]);
  rwToken = cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read,write", "--name", "action"]).trim();
  readToken = cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read", "--name", "reader"]).trim();
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
}, BUILD_TIMEOUT_MS + START_TIMEOUT_MS + 20_000);

afterAll(async () => {
  if (server) await server.stop("SIGTERM").catch(() => {});
  for (const proc of liveProcs) proc.kill("SIGKILL");
  await Promise.all([...liveProcs].map((p) => withTimeout(p.exited, 5_000, "a leftover server to die").catch(() => {})));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("action.yml", () => {
  const yml = readFileSync(join(ROOT, "action.yml"), "utf8");

  /** The block of lines indented under a top-level key (without the key line). */
  function block(key: string): string {
    const m = new RegExp(`^${key}:[ \\t]*\\n((?:(?:[ \\t]+.*)?\\n)*)`, "m").exec(yml);
    expect(m, `top-level key ${key}`).not.toBeNull();
    return m![1]!;
  }

  test("is a composite action with the documented inputs, running action/append.sh with them", () => {
    expect(yml).toMatch(/^name:\s*\S/m);
    expect(yml).toMatch(/^description:\s*\S/m);

    const inputsBlock = block("inputs");
    const inputs = [...inputsBlock.matchAll(/^ {2}([A-Za-z0-9_-]+):\s*$/gm)].map((m) => m[1]);
    expect(inputs.sort()).toEqual(["append-deadline-hours", "base-url", "filename", "text", "token", "webhook-url"].sort());
    // Each input's own block, to read `required:`.
    const inputBlock = (name: string) => new RegExp(`^ {2}${name}:\\s*\\n((?: {4,}.*\\n)*)`, "m").exec(inputsBlock)?.[1] ?? "";
    for (const name of ["base-url", "token", "filename"]) expect(inputBlock(name), name).toMatch(/^\s+required:\s*true\s*$/m);
    for (const name of ["text", "append-deadline-hours", "webhook-url"]) expect(inputBlock(name), name).toMatch(/^\s+required:\s*false\s*$/m);

    const runs = block("runs");
    expect(runs).toMatch(/^ {2}using:\s*["']?composite["']?\s*$/m);
    expect(runs).toMatch(/^\s+shell:\s*bash\s*$/m);
    expect(runs).toMatch(/^\s+run:\s*.*\$\{\{\s*github\.action_path\s*\}\}\/action\/append\.sh/m);
    expect(runs).toMatch(/^\s+-?\s*id:\s*append\s*$/m);

    // Every INPUT_* variable the script reads is set by the step, from the matching input.
    const script = readFileSync(SCRIPT, "utf8");
    const used = new Set([...script.matchAll(/\bINPUT_([A-Z_]+)/g)].map((m) => m[1]!));
    expect(used.size).toBeGreaterThan(0);
    for (const v of used) {
      if (v === "JOB_STATUS") {
        expect(runs).toMatch(/^\s+INPUT_JOB_STATUS:\s*\$\{\{\s*job\.status\s*\}\}\s*$/m);
        continue;
      }
      const input = v.toLowerCase().replace(/_/g, "-");
      expect(inputs, `INPUT_${v}`).toContain(input);
      expect(runs, `INPUT_${v}`).toMatch(new RegExp(`^\\s+INPUT_${v}:\\s*\\$\\{\\{\\s*inputs\\.${input}\\s*\\}\\}\\s*$`, "m"));
    }

    // The note-id output is the step's.
    expect(block("outputs")).toMatch(/note-id:[\s\S]*value:\s*\$\{\{\s*steps\.append\.outputs\.note-id\s*\}\}/);
  });
});

describe("action/append.sh against the binary", () => {
  test("without text: one line naming the repository, workflow, run link and status; note-id in GITHUB_OUTPUT", async () => {
    const r = runAction({
      INPUT_BASE_URL: `${server.base}/`,
      INPUT_TOKEN: rwToken,
      INPUT_FILENAME: "ci.log",
      INPUT_TEXT: "",
      INPUT_JOB_STATUS: "success",
      GITHUB_REPOSITORY: "octo-org/hello-world",
      GITHUB_WORKFLOW: "CI build",
      GITHUB_RUN_ID: "9876543210",
      GITHUB_RUN_NUMBER: "42",
      GITHUB_SERVER_URL: "https://github.example.com",
    });
    expect(r.code, describeRun(r)).toBe(0);

    const note = await readNote("ci.log");
    expect(note.kind).toBe("stream");
    const body = note.plain_body as string;
    expect(body.endsWith("\n")).toBe(true);
    const lines = body.slice(0, -1).split("\n");
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toContain("octo-org/hello-world");
    expect(line).toContain("CI build");
    expect(line).toContain("https://github.example.com/octo-org/hello-world/actions/runs/9876543210");
    expect(line).toContain("success");
    expect(line).toContain("42");

    expect(r.output).toMatch(/^note-id=note_\S+\n$/);
    expect(r.output).toBe(`note-id=${note.id}\n`);
  });

  test("text with quotes, backslashes, a tab and a newline, to a filename with spaces and unicode, is stored exactly", async () => {
    const filename = "nightly runs ü 日本 🚀.log";
    const text = `say "hi" \\ C:\\new\\table\\n end\tafter-tab é 日本 🎉\nsecond line 'single' $HOME \`x\``;
    const r = runAction({ INPUT_BASE_URL: server.base, INPUT_TOKEN: rwToken, INPUT_FILENAME: filename, INPUT_TEXT: text });
    expect(r.code, describeRun(r)).toBe(0);

    const note = await readNote(filename);
    expect(note.filename).toBe(filename);
    expect(note.plain_body).toBe(`${text}\n`);
    expect(r.output).toBe(`note-id=${note.id}\n`);

    // A second run appends to the same stream.
    const again = runAction({ INPUT_BASE_URL: server.base, INPUT_TOKEN: rwToken, INPUT_FILENAME: filename, INPUT_TEXT: "third" });
    expect(again.code, describeRun(again)).toBe(0);
    expect((await readNote(filename)).plain_body).toBe(`${text}\nthird\n`);
    expect(again.output).toBe(`note-id=${note.id}\n`);
  });

  test("other control characters in the text (an ANSI colour escape) do not break the request", async () => {
    // CI output is often coloured; the server strips control characters other than TAB and LF.
    const text = "\u001b[32mgreen\u001b[0m build \u0007done";
    const r = runAction({ INPUT_BASE_URL: server.base, INPUT_TOKEN: rwToken, INPUT_FILENAME: "ansi.log", INPUT_TEXT: text });
    expect(r.code, describeRun(r)).toBe(0);
    expect((await readNote("ansi.log")).plain_body).toBe("[32mgreen[0m build done\n");
  });

  test("append-deadline-hours sets expected_interval_seconds; webhook-url sets the webhook", async () => {
    const r = runAction({ INPUT_BASE_URL: server.base, INPUT_TOKEN: rwToken, INPUT_FILENAME: "deadline.log", INPUT_TEXT: "tick", INPUT_APPEND_DEADLINE_HOURS: "2" });
    expect(r.code, describeRun(r)).toBe(0);
    const note = await readNote("deadline.log");
    expect(note.expected_interval_seconds).toBe(7200);
    expect(note.webhook_url).toBeNull();
    expect(note.plain_body).toBe("tick\n");

    const both = runAction({
      INPUT_BASE_URL: server.base,
      INPUT_TOKEN: rwToken,
      INPUT_FILENAME: "hooked.log",
      INPUT_TEXT: "tock",
      INPUT_APPEND_DEADLINE_HOURS: "2",
      INPUT_WEBHOOK_URL: "https://hooks.example.com/x",
    });
    expect(both.code, describeRun(both)).toBe(0);
    const hooked = await readNote("hooked.log");
    expect(hooked.expected_interval_seconds).toBe(7200);
    expect(hooked.webhook_url).toBe("https://hooks.example.com/x");
    expect(both.output).toBe(`note-id=${hooked.id}\n`);
  });

  test("a bad token, a read-only token and an unreachable server all fail the step", async () => {
    const bad = runAction({ INPUT_BASE_URL: server.base, INPUT_TOKEN: `${rwToken}x`, INPUT_FILENAME: "refused.log", INPUT_TEXT: "nope" });
    expect(bad.code, describeRun(bad)).not.toBe(0);
    expect(bad.stderr).toContain("401");
    expect(bad.stderr).toContain('"code":"unauthorized"');
    expect(bad.stderr).not.toContain(rwToken);
    expect(bad.output).toBe("");

    const readOnly = runAction({ INPUT_BASE_URL: server.base, INPUT_TOKEN: readToken, INPUT_FILENAME: "refused.log", INPUT_TEXT: "nope" });
    expect(readOnly.code, describeRun(readOnly)).not.toBe(0);
    expect(readOnly.stderr).toContain("403");
    expect(readOnly.stderr).toContain('"code":"insufficient_scope"');
    expect(readOnly.output).toBe("");

    // A port that was free a moment ago: nothing listens there.
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const closedPort = probe.port;
    probe.stop(true);
    const unreachable = runAction({ INPUT_BASE_URL: `http://127.0.0.1:${closedPort}`, INPUT_TOKEN: rwToken, INPUT_FILENAME: "refused.log", INPUT_TEXT: "nope" });
    expect(unreachable.code, describeRun(unreachable)).not.toBe(0);
    expect(unreachable.stderr).toContain("failed");
    expect(unreachable.output).toBe("");

    // None of them wrote anything.
    expect((await getJson(notePath("refused.log"), rwToken)).status).toBe(404);
  });
});
