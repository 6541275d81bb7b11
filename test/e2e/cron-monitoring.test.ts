// Cron monitoring on the compiled binary: the `pause` and `quiet` commands, and the alert mails
// that quiet time, maintenance windows and pause hold back, received by a loopback SMTP server.
// One server and one SMTP server serve every test; each test watches streams of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { append, buildBinary, cleanup, cli, getNote, provision, request, startServer, tempDir, type RunningServer } from "../helpers/binary";
import { smtpServer } from "../helpers/mail";

let server: RunningServer;
let smtp: Awaited<ReturnType<typeof smtpServer>>;
let token = "";

beforeAll(async () => {
  buildBinary();
  smtp = await smtpServer();
  const dataDir = tempDir("data");
  token = provision(dataDir).token;
  server = await startServer(dataDir, { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_MIN_INTERVAL_SECONDS: "1", NOTESTREAM_LOG_REQUESTS: "false" });
}, 90_000);

afterAll(async () => {
  await server?.stop().catch(() => {});
  await smtp?.stop();
  await cleanup();
});

const env = () => ({ NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: token });

/** A new stream with one line; its id. */
async function stream(filename: string): Promise<string> {
  const r = await append(server.base, token, filename, "ran");
  expect(r.status).toBe(201);
  return (r.body as { id: string }).id;
}

async function patch(id: string, note: Record<string, unknown>) {
  const r = await request(server.base, "PATCH", `/api/v1/notes/${id}`, { token, json: { note } });
  expect(r.status).toBe(200);
  return r.body;
}

const mailsAbout = (filename: string) => smtp.mails.filter((m) => m.subject.includes(` ${filename} `));

/** Resolves with the time the first alert about the stream arrived, bounded by `ms`. */
async function firstAlert(filename: string, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  while (mailsAbout(filename).length === 0) {
    if (Date.now() > deadline) throw new Error(`no mail about ${filename} in ${ms} ms`);
    await Bun.sleep(10);
  }
  return Date.now();
}

/** Sleeps until `at` (epoch ms), asserting no mail about the stream arrives before then. */
async function noMailUntil(filename: string, at: number): Promise<void> {
  while (Date.now() < at) {
    expect(mailsAbout(filename)).toEqual([]);
    await Bun.sleep(20);
  }
}

/** Asserts the stream's late alert is held back until `at`, then arrives, once. */
async function expectAlertHeldUntil(filename: string, at: number): Promise<void> {
  await noMailUntil(filename, at - 200);
  expect(await firstAlert(filename, 6_000)).toBeGreaterThanOrEqual(at);
  await Bun.sleep(2_500);
  expect(mailsAbout(filename).map((m) => m.subject)).toEqual([`[notestream] ${filename} has gone quiet`]);
}

test("pause prints paused and pauses the stream, named by filename or by id", async () => {
  const id = await stream("pause-cli.log");
  const byName = cli(["pause", "pause-cli.log"], env());
  expect(byName).toMatchObject({ code: 0, stdout: "paused\n" });
  expect(byName.stderr).toContain("pause-cli.log is paused");
  expect((await getNote(server.base, token, "pause-cli.log")).deadman_status).toBe("paused");
  await append(server.base, token, "pause-cli.log", "back");
  expect((await getNote(server.base, token, "pause-cli.log")).deadman_status).not.toBe("paused");
  expect(cli(["pause", id], env())).toMatchObject({ code: 0, stdout: "paused\n" });
  expect((await getNote(server.base, token, "pause-cli.log")).deadman_status).toBe("paused");
});

test("quiet --for, --until and --off set and clear quiet_until and print it", async () => {
  await stream("quiet-cli.log");
  const before = Date.now();
  const forHour = cli(["quiet", "quiet-cli.log", "--for", "1h30m"], env());
  expect(forHour.code).toBe(0);
  const until = Date.parse(forHour.stdout.trim());
  expect(until).toBeGreaterThanOrEqual(before + 90 * 60_000);
  expect(until).toBeLessThan(Date.now() + 90 * 60_000);
  expect((await getNote(server.base, token, "quiet-cli.log")).quiet_until).toBe(forHour.stdout.trim());

  const at = new Date(Date.now() + 2 * 86_400_000).toISOString().replace(/\.\d+Z$/, ".000Z");
  expect(cli(["quiet", "quiet-cli.log", "--until", at], env())).toMatchObject({ code: 0, stdout: `${at}\n` });
  expect((await getNote(server.base, token, "quiet-cli.log")).quiet_until).toBe(at);

  const off = cli(["quiet", "quiet-cli.log", "--off"], env());
  expect(off).toMatchObject({ code: 0, stdout: "off\n" });
  expect(off.stderr).toContain("quiet-cli.log is not quiet");
  expect((await getNote(server.base, token, "quiet-cli.log")).quiet_until).toBeNull();
});

test("bad arguments exit 2 with usage; the server's refusals exit 1 with its code and message", async () => {
  await stream("refusals.log");
  const usage = [
    ["pause"],
    ["pause", "a.log", "b.log"],
    ["pause", "refusals.log", "--for", "1h"],
    ["quiet", "refusals.log"],
    ["quiet", "refusals.log", "--for", "1h", "--off"],
    ["quiet", "refusals.log", "--for", "an hour"],
    ["quiet", "refusals.log", "--for", "0m"],
    ["quiet", "refusals.log", "--until", "tomorrow"],
    ["quiet", "--off"],
  ];
  for (const args of usage) {
    const r = cli(args, env());
    expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
    expect(r.stderr).toStartWith("notestream: ");
    expect(r.stderr).toContain('Run "notestream help" for usage.');
  }
  const missing = cli(["pause", "nope.log"], env());
  expect(missing).toMatchObject({ code: 1, stdout: "" });
  expect(missing.stderr).toStartWith("notestream: not_found: ");
  const tooFar = cli(["quiet", "refusals.log", "--for", "31d"], env());
  expect(tooFar).toMatchObject({ code: 1, stdout: "" });
  expect(tooFar.stderr).toStartWith("notestream: validation_failed: note.quiet_until: quiet_until may be at most 30 days ahead");
  const editable = await request(server.base, "POST", "/api/v1/notes", { token, json: { note: { title: "plan", plain_body: "x" } } });
  expect(editable.status).toBe(201);
  const notStream = cli(["pause", (editable.body as { id: string }).id], env());
  expect(notStream.code).toBe(1);
  expect(notStream.stderr).toStartWith("notestream: validation_failed: id: ");
  expect((await getNote(server.base, token, "refusals.log")).quiet_until).toBeNull();
});

test("help lists pause and quiet", () => {
  const help = cli(["help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("notestream pause FILENAME|ID");
  expect(help.stdout).toContain("notestream quiet FILENAME|ID --for 1h | --until TIME | --off");
});

test("quiet time holds a late stream's alert back and sends it once when it ends", async () => {
  const id = await stream("quiet-late.log");
  const quiet = cli(["quiet", "quiet-late.log", "--for", "4s"], env());
  expect(quiet.code).toBe(0);
  const ends = Date.parse(quiet.stdout.trim());
  await patch(id, { expected_interval_seconds: 1 });
  await expectAlertHeldUntil("quiet-late.log", ends);
}, 20_000);

test("a maintenance window holds a late stream's alert back and sends it once when the window closes", async () => {
  const id = await stream("window-late.log");
  // A window that opened a second ago, once a minute, for 5 s: it is open now and closes in about 4 s.
  const opened = Math.floor(Date.now() / 1000) * 1000 - 1000;
  const second = new Date(opened).getUTCSeconds();
  await patch(id, { expected_interval_seconds: 1, maintenance: [{ schedule: `${second} * * * * *`, timezone: "UTC", duration_seconds: 5 }] });
  await noMailUntil("window-late.log", opened + 4_700);
  expect((await getNote(server.base, token, "window-late.log")).deadman_status).toBe("late");
  await expectAlertHeldUntil("window-late.log", opened + 5_000);
}, 20_000);

test("pause suppresses a late stream's alert until its next write, after which it is watched again", async () => {
  const id = await stream("paused-late.log");
  await patch(id, { expected_interval_seconds: 2 });
  expect(cli(["pause", "paused-late.log"], env()).code).toBe(0);
  // Unpaused, it would go late 2 s after its write and alert at the next sweep (every 2 s).
  await noMailUntil("paused-late.log", Date.now() + 5_000);
  expect((await getNote(server.base, token, "paused-late.log")).deadman_status).toBe("paused");
  const wrote = Date.now();
  await append(server.base, token, "paused-late.log", "back at work");
  const arrived = await firstAlert("paused-late.log", 8_000);
  expect(arrived - wrote).toBeGreaterThanOrEqual(2_000);
  expect(mailsAbout("paused-late.log").map((m) => m.subject)).toEqual(["[notestream] paused-late.log has gone quiet"]);
}, 20_000);
