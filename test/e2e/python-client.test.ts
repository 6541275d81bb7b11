/**
 * The Python client (clients/python) as a user gets it: scripts/build-python.sh builds the wheel,
 * `pip install` puts it in a fresh venv, and its unittest file (clients/python/tests) runs on that
 * venv's Python against the compiled binary. The binary is restarted on the same port when the
 * Python side asks (it prints "restart", then reads "ready"), so follow's resumption meets a real
 * restart. Skipped, saying why, where python3 is missing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { BUILD_TIMEOUT_MS, ROOT, buildBinary, childEnv, cleanup, cliOk, provision, startServer, tempDir, type RunningServer } from "../helpers/binary";

const python = Bun.which("python3");
if (!python) console.warn("python-client.test.ts: python3 not found on PATH; the Python client's tests are skipped");

let server: RunningServer | undefined;
let dataDir = "";
let venvPython = "";
const serverEnv = { NOTESTREAM_LIMIT_PROFILE: "standard" };

function run(cmd: string[], what: string, timeout = 60_000): string {
  const r = Bun.spawnSync(cmd, { cwd: ROOT, env: childEnv({}), stdout: "pipe", stderr: "pipe", timeout });
  if (r.exitCode !== 0) throw new Error(`${what} failed (exit ${r.exitCode}):\n${r.stderr.toString()}\n${r.stdout.toString()}`);
  return r.stdout.toString().trim();
}

beforeAll(async () => {
  if (!python) return;
  buildBinary();
  // Minutes at most once: where no python3 can build a wheel, the script installs Debian's packages first.
  const wheel = run(["bash", "scripts/build-python.sh"], "scripts/build-python.sh", 180_000).split("\n").at(-1)!;
  const venv = join(tempDir("venv"), "venv");
  run([python, "-m", "venv", venv], "python3 -m venv");
  venvPython = join(venv, "bin", "python");
  run([venvPython, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", wheel], "pip install of the wheel");
  dataDir = tempDir("data");
  server = await startServer(dataDir, serverEnv);
}, BUILD_TIMEOUT_MS + 240_000);

afterAll(async () => {
  await server?.stop().catch(() => {});
  await cleanup();
});

test.skipIf(!python)("the installed Python client passes its tests against the binary, across a restart", async () => {
  const { token } = provision(dataDir);
  // A second token of the same account: one test spends its write budget to meet a real 429.
  const rateToken = cliOk(dataDir, ["token", "create", "--email", "ops@example.com", "--scope", "read,write"]).stdout.trim();
  const version = (await Bun.file(join(ROOT, "package.json")).json()).version as string;
  const proc = Bun.spawn([venvPython, "-m", "unittest", "discover", "-v", "-s", join(ROOT, "clients/python/tests"), "-t", join(ROOT, "clients/python/tests")], {
    cwd: tempDir("py-cwd"),
    env: childEnv({ NOTESTREAM_TEST_URL: server!.base, NOTESTREAM_TEST_TOKEN: token, NOTESTREAM_TEST_RATE_TOKEN: rateToken, NOTESTREAM_TEST_VERSION: version, PYTHONDONTWRITEBYTECODE: "1" }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  let restarts = 0;
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of proc.stdout) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line !== "restart") continue;
      const port = server!.port;
      await server!.stop("SIGTERM");
      server = await startServer(dataDir, { ...serverEnv, NOTESTREAM_PORT: String(port) });
      restarts++;
      proc.stdin.write("ready\n");
      proc.stdin.flush();
    }
  }
  const code = await proc.exited;
  const report = await stderr;
  if (code !== 0) throw new Error(`the Python tests failed (exit ${code}):\n${report}`);
  // Every test ran and none was skipped: a missing server address would skip them quietly.
  expect(report).toMatch(/\nRan 14 tests in [\d.]+s\n\nOK\n/);
  expect(restarts).toBe(1);
}, 60_000);
