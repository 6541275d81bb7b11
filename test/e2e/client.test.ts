import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildBinary, cleanup, cli, provision, readStream, startServer, tempDir, type RunningServer } from "../helpers/binary";

let server: RunningServer;
let token = "";
let binPath = "";
let dataDir = "";
const serverEnv = { NOTESTREAM_LIMIT_PROFILE: "unlimited", NOTESTREAM_LOG_REQUESTS: "true" };

beforeAll(async () => {
  binPath = buildBinary();
  dataDir = tempDir("data");
  token = provision(dataDir).token;
  server = await startServer(dataDir, serverEnv);
}, 90_000);

afterAll(async () => {
  await server?.stop().catch(() => {});
  await cleanup();
});

const env = () => ({ NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: token });

test("append with words appends them as one line", async () => {
  const r = cli(["append", "words.log", "deploy", "ok"], env());
  expect(r.code).toBe(0);
  expect(await readStream(server.base, token, "words.log")).toBe("deploy ok\n");
});

test("10,000 piped lines arrive in order in few requests", async () => {
  const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`);
  const before = server.logs.filter((l) => l.includes("piped.log")).length;
  const proc = Bun.spawn([binPath, "append", "piped.log"], { env: { ...process.env, ...env() }, stdin: new Blob([lines.join("\n") + "\n"]), stdout: "pipe", stderr: "pipe" });
  expect(await proc.exited).toBe(0);
  expect(await readStream(server.base, token, "piped.log")).toBe(`${lines.join("\n")}\n`);
  await Bun.sleep(100); // request log lines are written at most 10 ms late
  const requests = server.logs.filter((l) => l.includes("piped.log")).length - before;
  expect(requests).toBeGreaterThanOrEqual(20); // 500 lines a request at most
  expect(requests).toBeLessThanOrEqual(25);
}, 30_000);

test("tail -n 5 prints the newest five lines", () => {
  for (let i = 0; i < 8; i++) cli(["append", "tail.log", `t${i}`], env());
  const r = cli(["tail", "-n", "5", "tail.log"], env());
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("t3\nt4\nt5\nt6\nt7\n");
});

test("ls lists every note, one per line; cat prints a note by filename or id, byte for byte", async () => {
  cli(["append", "cat.log", "first line"], env());
  cli(["append", "cat.log", "ünïcode ✓"], env());
  const ls = cli(["ls", "--kind", "stream"], env());
  expect(ls.code).toBe(0);
  const row = ls.stdout.split("\n").find((l) => l.endsWith("\tcat.log"))!;
  const [id, kind, bytes] = row.split("\t");
  expect(id).toStartWith("note_");
  expect(kind).toBe("stream");
  expect(Number(bytes)).toBe(Buffer.byteLength("first line\nünïcode ✓\n"));
  expect(cli(["ls", "--kind", "editable"], env()).stdout).not.toContain("cat.log");
  expect(cli(["cat", "cat.log"], env()).stdout).toBe("first line\nünïcode ✓\n");
  expect(cli(["cat", id!], env()).stdout).toBe("first line\nünïcode ✓\n");
  const missing = cli(["cat", "nope.log"], env());
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("not_found");
});

test("run wraps a passing job: a start line, its output passed through, ok with its time; exit 0", async () => {
  const r = cli(["run", "--stream", "job.log", "--", "sh", "-c", "echo working; echo warning >&2"], env());
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("working\n");
  expect(r.stderr).toBe("warning\n");
  expect(await readStream(server.base, token, "job.log")).toMatch(/^start: sh -c echo working; echo warning >&2\nok in \d+s\n$/);
});

test("run wraps a failing job: FAILED with its exit status and last stderr lines, the stream failing, the job's own status", async () => {
  const r = cli(["run", "--stream", "job.log", "--quiet", "--", "sh", "-c", "echo step one >&2; echo 'disk full' >&2; exit 3"], env());
  expect(r.code).toBe(3);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe("");
  const lines = (await readStream(server.base, token, "job.log")).trimEnd().split("\n");
  expect(lines.at(-1)).toMatch(/^FAILED \(exit 3\) in \d+s: step one \| disk full$/);
  const note = (await (await fetch(`${server.base}/api/v1/notes/by-filename/job.log`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
  expect(note.deadman_status).toBe("failing");
  expect(note.last_run_seconds).toBeGreaterThanOrEqual(0);
  // The job runs even when the server cannot be reached, and keeps its status.
  const offline = cli(["run", "--", "sh", "-c", "exit 4"], { NOTESTREAM_URL: "http://127.0.0.1:1", NOTESTREAM_TOKEN: token });
  expect(offline.code).toBe(4);
  expect(offline.stderr).toContain("cannot reach http://127.0.0.1:1");
});

test("a bad token exits 1 with the API's code", () => {
  const r = cli(["append", "x.log", "hi"], { NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: "ns_bogus" });
  expect(r.code).toBe(1);
  expect(r.stderr.trim()).toMatch(/^notestream: unauthorized: /);
});

test("an unreachable server exits 1 with one line", () => {
  const r = cli(["tail", "x.log"], { NOTESTREAM_URL: "http://127.0.0.1:1", NOTESTREAM_TOKEN: token });
  expect(r.code).toBe(1);
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
  expect(r.stderr).toContain("cannot reach http://127.0.0.1:1");
});

test("tail -f prints new lines and keeps following across a server restart, each line once", async () => {
  cli(["append", "follow.log", "before"], env());
  const proc = Bun.spawn([binPath, "tail", "-n", "1", "-f", "follow.log"], { env: { ...process.env, ...env() }, stdout: "pipe", stderr: "pipe" });
  let seen = "";
  void (async () => {
    for await (const chunk of proc.stdout) seen += new TextDecoder().decode(chunk);
  })();
  const until = async (text: string) => {
    const deadline = Date.now() + 10_000;
    while (!seen.includes(text)) {
      if (Date.now() > deadline) throw new Error(`tail -f never printed ${text}; got ${JSON.stringify(seen)}`);
      await Bun.sleep(20);
    }
  };
  await until("before\n");
  cli(["append", "follow.log", "live"], env());
  await until("live\n");
  await server.stop("SIGTERM");
  server = await startServer(dataDir, { ...serverEnv, NOTESTREAM_PORT: String(server.port) });
  // Two lines in one append: resuming from anything but the last id seen loses or repeats one.
  const r = Bun.spawnSync([binPath, "append", "follow.log"], { env: { ...process.env, ...env() }, stdin: new Blob(["gap 1\ngap 2\n"]) });
  expect(r.exitCode).toBe(0);
  await until("gap 2\n");
  await Bun.sleep(300);
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
  expect(seen).toBe("before\nlive\ngap 1\ngap 2\n");
}, 30_000);
