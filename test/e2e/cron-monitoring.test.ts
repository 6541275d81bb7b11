// Cron monitoring on the compiled binary: the `pause`, `quiet` and `ack` commands, and the alert
// mails, received by a loopback SMTP server: held back by quiet time, maintenance windows and pause,
// repeated, escalated, and stopped by the acknowledge link opened in Chromium. One server and one
// SMTP server serve every test; each test watches streams of its own, so the mail tests, which
// mostly wait on the clock, run side by side (test.concurrent).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chromium } from "playwright-core";
import { append, appendPath, buildBinary, cleanup, cli, getNote, provision, request, startServer, tempDir, waitFor, type RunningServer } from "../helpers/binary";
import { CHROMIUM, hasChromium } from "../helpers/browser";
import { smtpServer } from "../helpers/mail";

let server: RunningServer;
let smtp: Awaited<ReturnType<typeof smtpServer>>;
let token = "";
/** Links in mails start with it; the tests reach the server behind it on its loopback port, as a proxy would. */
const MAIL_ORIGIN = "https://monitor.example";

beforeAll(async () => {
  buildBinary();
  smtp = await smtpServer();
  const dataDir = tempDir("data");
  token = provision(dataDir).token;
  server = await startServer(dataDir, {
    NOTESTREAM_SMTP_URL: smtp.url,
    NOTESTREAM_MIN_INTERVAL_SECONDS: "1",
    NOTESTREAM_LOG_REQUESTS: "false",
    NOTESTREAM_BASE_URL: MAIL_ORIGIN,
  });
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

/** An append with a signal (status ok or fail), as `notestream run` sends. */
async function signal(filename: string, status: "ok" | "fail", text: string): Promise<void> {
  const r = await request(server.base, "POST", appendPath(filename), { token, json: { text, status } });
  expect(r.status).toBe(200);
}

async function patch(id: string, note: Record<string, unknown>) {
  const r = await request(server.base, "PATCH", `/api/v1/notes/${id}`, { token, json: { note } });
  expect(r.status).toBe(200);
  return r.body;
}

const mailsAbout = (filename: string) => smtp.mails.filter((m) => m.subject.includes(` ${filename} `));

/** Resolves with the time the `count`th mail about the stream arrived, bounded by `ms`. */
async function mailNumber(filename: string, count: number, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  while (mailsAbout(filename).length < count) {
    if (Date.now() > deadline) throw new Error(`${mailsAbout(filename).length} of ${count} mails about ${filename} in ${ms} ms`);
    await Bun.sleep(10);
  }
  return Date.now();
}

const firstAlert = (filename: string, ms: number) => mailNumber(filename, 1, ms);

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
    ["ack"],
    ["ack", "a.log", "b.log"],
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

test("ack acknowledges a failing stream's spell and prints when; a stream on time is refused with conflict", async () => {
  await stream("ack-cli.log");
  const onTime = cli(["ack", "ack-cli.log"], env());
  expect(onTime).toMatchObject({ code: 1, stdout: "" });
  expect(onTime.stderr).toStartWith("notestream: conflict: ");
  await signal("ack-cli.log", "fail", "rc=1");
  const acked = cli(["ack", "ack-cli.log"], env());
  expect(acked.code).toBe(0);
  expect(acked.stderr).toContain("ack-cli.log is acknowledged");
  const note = await getNote(server.base, token, "ack-cli.log");
  expect(note.acknowledged_at).not.toBeNull();
  expect(acked.stdout).toBe(`${note.acknowledged_at}\n`);
});

test("help lists pause, quiet and ack", () => {
  const help = cli(["help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("notestream pause FILENAME|ID");
  expect(help.stdout).toContain("notestream quiet FILENAME|ID --for 1h | --until TIME | --off");
  expect(help.stdout).toContain("notestream ack FILENAME|ID");
});

test.concurrent("quiet time holds a late stream's alert back and sends it once when it ends", async () => {
  const id = await stream("quiet-late.log");
  const quiet = cli(["quiet", "quiet-late.log", "--for", "4s"], env());
  expect(quiet.code).toBe(0);
  const ends = Date.parse(quiet.stdout.trim());
  await patch(id, { expected_interval_seconds: 1 });
  await expectAlertHeldUntil("quiet-late.log", ends);
}, 20_000);

test.concurrent("a maintenance window holds a late stream's alert back and sends it once when the window closes", async () => {
  const id = await stream("window-late.log");
  // A window that opened a second ago, once a minute, for 5 s: it is open now and closes in about 4 s.
  const opened = Math.floor(Date.now() / 1000) * 1000 - 1000;
  const second = new Date(opened).getUTCSeconds();
  await patch(id, { expected_interval_seconds: 1, maintenance: [{ schedule: `${second} * * * * *`, timezone: "UTC", duration_seconds: 5 }] });
  await noMailUntil("window-late.log", opened + 4_700);
  expect((await getNote(server.base, token, "window-late.log")).deadman_status).toBe("late");
  await expectAlertHeldUntil("window-late.log", opened + 5_000);
}, 20_000);

test.concurrent("pause suppresses a late stream's alert until its next write, after which it is watched again", async () => {
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

test.concurrent("a failing stream's alert repeats, saying for how long, and escalates to escalate_to once; ok ends both", async () => {
  const id = await stream("repeat.log");
  await patch(id, { repeat_alert_seconds: 2, escalate_after_seconds: 3, escalate_to: "boss@example.com" });
  await signal("repeat.log", "fail", "rc=3");
  await mailNumber("repeat.log", 3, 10_000);
  const [alert, ...later] = mailsAbout("repeat.log");
  expect(alert!).toMatchObject({ subject: "[notestream] repeat.log reported a failure", to: ["ops@example.com"] });
  const repeat = later.find((m) => m.subject.includes("still failing"))!;
  expect(repeat.subject).toMatch(/^\[notestream\] repeat\.log is still failing \(\d+ seconds\)$/);
  expect(repeat.to).toEqual(["ops@example.com"]);
  expect(repeat.text).toContain("This is reminder 1 of at most 24");
  const escalations = () => mailsAbout("repeat.log").filter((m) => m.to.includes("boss@example.com"));
  await waitFor(() => escalations().length > 0, 6_000, "the escalation mail");
  expect(escalations().map((m) => m.subject)).toEqual([expect.stringMatching(/^\[notestream\] escalated: repeat\.log has been failing for \d+ seconds$/)]);
  await signal("repeat.log", "ok", "fixed");
  const settled = mailsAbout("repeat.log").length;
  await Bun.sleep(4_500);
  // At most the recovery after the ok: no reminder, no second escalation.
  expect(mailsAbout("repeat.log").slice(settled).map((m) => m.subject).filter((s) => !s.includes("writing again") && !s.includes("reported ok"))).toEqual([]);
  expect(escalations()).toHaveLength(1);
}, 30_000);

test.concurrent.skipIf(!hasChromium)("the alert mail's acknowledge link: GETs change nothing; its one button, clicked in Chromium, acknowledges and ends repeats and escalation", async () => {
  const id = await stream("ack-link.log");
  await patch(id, { repeat_alert_seconds: 2, escalate_after_seconds: 5, escalate_to: "lead@example.com" });
  const failedAt = Date.now();
  await signal("ack-link.log", "fail", "disk full");
  await firstAlert("ack-link.log", 5_000);
  const mailed = /Acknowledge[^:]*: (\S+\/ack\/\S+)/.exec(mailsAbout("ack-link.log")[0]!.text)?.[1];
  expect(mailed).toMatch(new RegExp(`^${MAIL_ORIGIN}/ack/ack_\\w+$`));
  const link = mailed!.replace(MAIL_ORIGIN, server.base);
  // What a mail scanner or a link preview does: fetch the link, more than once.
  for (let i = 0; i < 3; i++) {
    const res = await fetch(link);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html.match(/<form\b[^>]*>/g)).toEqual([`<form method="post" action="${new URL(link).pathname}">`]);
    expect(html.match(/<button type="submit"/g)).toHaveLength(1);
  }
  expect((await getNote(server.base, token, "ack-link.log")).acknowledged_at).toBeNull();

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  try {
    const page = await browser.newPage();
    await page.goto(link);
    // The one button that does anything here (the page's frame has its light/dark toggle too).
    const buttons = page.locator("form button");
    expect(await buttons.allTextContents()).toEqual(["Acknowledge"]);
    await buttons.click();
    await page.getByText("Acknowledged.").waitFor({ timeout: 5_000 });
  } finally {
    await browser.close();
  }
  const note = await getNote(server.base, token, "ack-link.log");
  expect(note.acknowledged_at).not.toBeNull();
  expect(note.deadman_status).toBe("failing");
  // Acknowledged before the escalation was due; past it and two reminders' time nothing more comes.
  expect(Date.parse(note.acknowledged_at)).toBeLessThan(failedAt + 5_000);
  const sent = mailsAbout("ack-link.log").length;
  await Bun.sleep(Math.max(4_500, failedAt + 7_500 - Date.now()));
  expect(mailsAbout("ack-link.log").slice(sent)).toEqual([]);
  expect(mailsAbout("ack-link.log").filter((m) => m.to.includes("lead@example.com"))).toEqual([]);
}, 30_000);
