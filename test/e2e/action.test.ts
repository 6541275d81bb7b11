/**
 * The GitHub Action (action.yml + action/append.sh) against the real compiled binary: the binary
 * is built once with `bun build --compile`, `serve` runs on a temp data dir with a Dev account
 * and tokens made with its own CLI, and the script runs under bash with the INPUT_* and GITHUB_*
 * variables GitHub would set. The binary, server and HTTP helpers are shared with binary.test.ts
 * (test/helpers/binary.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  BUILD_TIMEOUT_MS,
  ROOT,
  type RunningServer,
  START_TIMEOUT_MS,
  buildBinary,
  childEnv,
  cleanup,
  cliOk,
  getNote,
  notePath,
  request,
  startServer,
  tempDir,
} from "../helpers/binary";

const SCRIPT = join(ROOT, "action", "append.sh");
const SCRIPT_TIMEOUT_MS = 20_000;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const readNote = (filename: string): Promise<any> => getNote(server.base, rwToken, filename);

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
  buildBinary();

  const dataDir = tempDir("data");
  const email = "ci@example.com";
  cliOk(dataDir, ["account", "create", "--email", email, "--plan", "dev"]);
  rwToken = cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read,write", "--name", "action"]).stdout.trim();
  readToken = cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read", "--name", "reader"]).stdout.trim();
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
}, BUILD_TIMEOUT_MS + START_TIMEOUT_MS + 20_000);

afterAll(async () => {
  if (server) await server.stop("SIGTERM").catch(() => {});
  await cleanup();
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
    expect((await request(server.base, "GET", notePath("refused.log"), { token: rwToken })).status).toBe(404);
  });
});
