import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jobs } from "../../src/db/tables";
import { runAllTasks, runTask } from "../../src/schedule";
import { errorOf, FakeClock, harness, type Harness } from "../helpers/harness";
import { smtpServer } from "../helpers/mail";

let h: Harness;
let smtp: Awaited<ReturnType<typeof smtpServer>> | undefined;
afterEach(async () => {
  await h.close();
  await smtp?.stop();
  smtp = undefined;
});

const MIN = 60_000;

/** A Dev account with a stream, its dead-man's switch set, mail going to a loopback SMTP server. */
async function setup(opts: { refuse?: number; interval?: number; alertEmail?: string | null; env?: Record<string, string> } = {}) {
  smtp = await smtpServer({ refuse: opts.refuse });
  h = await harness({ env: { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_MAIL_FROM: "notestream <alerts@notestream.test>", ...opts.env } });
  const account = await h.account("dev", "owner@example.com");
  const token = await h.token(account);
  for (const line of ["nightly backup ok", "nightly backup ok (2)", "nightly backup ok (3)"]) {
    await h.request("POST", "/api/v1/notes/by-filename/backups.log/append", { token, body: { text: line } });
  }
  const { id } = await (await h.request("GET", "/api/v1/notes/by-filename/backups.log", { token })).json();
  const patch: Record<string, unknown> = { expected_interval_seconds: opts.interval ?? 3600 };
  if (opts.alertEmail !== undefined) patch.alert_email = opts.alertEmail;
  const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: patch } });
  expect(res.status).toBe(200);
  return { token, id, note: await res.json() };
}

/** What the scheduler does every 2 s, then the mail job. */
async function tick() {
  await runTask(h.deps, "deadman");
  await h.jobs.drain();
}

describe("dead-man's switch", () => {
  test("arming shows deadman_status ok; silence past the interval sends one alert to alert_email", async () => {
    const { token, id, note } = await setup({ alertEmail: "ops@example.com" });
    expect(note).toMatchObject({ expected_interval_seconds: 3600, alert_email: "ops@example.com", deadman_status: "ok" });
    h.clock.advance(59 * MIN);
    await tick();
    expect(smtp!.mails).toHaveLength(0);
    h.clock.advance(MIN + 1000);
    await tick();
    await smtp!.waitFor(1);
    const mail = smtp!.mails[0]!;
    expect(mail.to).toEqual(["ops@example.com"]);
    expect(mail.from).toBe("alerts@notestream.test");
    expect(mail.subject).toBe("[notestream] backups.log has gone quiet");
    expect(mail.text).toContain("No write has reached \"backups.log\" for 60 minutes");
    expect(mail.text).toContain(`Last heard from: ${new Date(h.clock.now() - 60 * MIN - 1000).toISOString()}`);
    expect(mail.text).toContain("  nightly backup ok (3)");
    expect(mail.text).toContain(`/api/v1/notes/${id}`);
    const late = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(late.deadman_status).toBe("late");
    // The same silence never alerts twice.
    for (let i = 0; i < 3; i++) {
      h.clock.advance(60 * MIN);
      await tick();
    }
    expect(smtp!.mails).toHaveLength(1);
  });

  test("when writes resume, one more mail says so, and the switch is armed again", async () => {
    const { token, id } = await setup();
    h.clock.advance(61 * MIN);
    await tick();
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.to).toEqual(["owner@example.com"]); // no alert_email: the account's address
    await h.request("POST", "/api/v1/notes/by-filename/backups.log/append", { token, body: { text: "backup ran late but ok" } });
    await h.jobs.drain();
    await smtp!.waitFor(2);
    expect(smtp!.mails[1]!.subject).toBe("[notestream] backups.log is writing again");
    expect(smtp!.mails[1]!.text).toContain("backup ran late but ok");
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.deadman_status).toBe("ok");
    // Writes keep it quiet; a new silence alerts again, once.
    await h.request("POST", "/api/v1/notes/by-filename/backups.log/append", { token, body: { text: "more" } });
    h.clock.advance(59 * MIN);
    await tick();
    expect(smtp!.mails).toHaveLength(2);
    h.clock.advance(2 * MIN);
    await tick();
    await smtp!.waitFor(3);
    expect(smtp!.mails[2]!.subject).toContain("has gone quiet");
  });

  test("a restart between the alert and the next check sends no duplicate; the deadline is in the database", async () => {
    await setup();
    h.clock.advance(61 * MIN);
    await tick();
    await smtp!.waitFor(1);
    await h.stop();
    h = await harness({ dataDir: h.dataDir, clock: h.clock, env: { NOTESTREAM_SMTP_URL: smtp!.url } });
    await runAllTasks(h.deps);
    await h.jobs.drain();
    h.clock.advance(10 * MIN);
    await tick();
    expect(smtp!.mails).toHaveLength(1);
  });

  test("a deadline that passed while the server was down alerts at start-up", async () => {
    await setup();
    await h.stop();
    h.clock.advance(2 * 60 * MIN);
    h = await harness({ dataDir: h.dataDir, clock: h.clock, env: { NOTESTREAM_SMTP_URL: smtp!.url } });
    await runAllTasks(h.deps);
    await h.jobs.drain();
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.subject).toContain("has gone quiet");
  });

  test("an SMTP server that refuses the first attempt still gets the mail, later", async () => {
    await setup({ refuse: 1 });
    h.clock.advance(61 * MIN);
    await tick();
    expect(smtp!.refusedCount()).toBe(1);
    expect(smtp!.mails).toHaveLength(0);
    const [job] = await h.deps.db.select({ status: jobs.status, lastError: jobs.lastError }).from(jobs).where(eq(jobs.queue, "mail"));
    expect(job!.status).toBe("pending");
    expect(job!.lastError).toContain("try again later");
    h.clock.advance(10_000);
    await h.jobs.drain();
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.subject).toContain("has gone quiet");
  });

  test("null turns the switch off; the interval has a minimum, lowerable by configuration", async () => {
    const { token, id } = await setup();
    const tooShort = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: 59 } } });
    expect(tooShort.status).toBe(422);
    expect((await errorOf(tooShort)).details[0]).toMatchObject({ field: "note.expected_interval_seconds", code: "out_of_range" });
    const badEmail = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { alert_email: "not-an-address" } } });
    expect(badEmail.status).toBe(422);
    const off = await (await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: null } } })).json();
    expect(off).toMatchObject({ expected_interval_seconds: null, deadman_status: "off" });
    h.clock.advance(10 * 60 * MIN);
    await tick();
    expect(smtp!.mails).toHaveLength(0);
    await h.close();
    await smtp!.stop();
    const short = await setup({ interval: 2, env: { NOTESTREAM_MIN_INTERVAL_SECONDS: "1" } });
    expect(short.note.expected_interval_seconds).toBe(2);
  });

  test("streams only, and only on plans that have it (403 plan_required elsewhere)", async () => {
    const { token } = await setup();
    const editable = await (await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).json();
    const res = await h.request("PATCH", `/api/v1/notes/${editable.id}`, { token, body: { note: { expected_interval_seconds: 3600 } } });
    expect(res.status).toBe(422);
    await h.close();
    await smtp!.stop();
    smtp = undefined;

    h = await harness({ profile: "alternate" });
    const devToken = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/x/append", { token: devToken, body: { text: "x" } })).json();
    const refused = await h.request("PATCH", `/api/v1/notes/${id}`, { token: devToken, body: { note: { expected_interval_seconds: 3600 } } });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe("plan_required");
    const pro = await h.token(await h.account("dev_pro"));
    const n = await (await h.request("POST", "/api/v1/notes/by-filename/x/append", { token: pro, body: { text: "x" } })).json();
    expect((await h.request("PATCH", `/api/v1/notes/${n.id}`, { token: pro, body: { note: { expected_interval_seconds: 3600 } } })).status).toBe(200);
  });
});

describe("full or silent, and bounded", () => {
  const CAP = 3 * 1024 * 1024;
  const append = (token: string, text: string) => h.request("POST", "/api/v1/notes/by-filename/backups.log/append", { token, body: { text } });

  test("a stream that is full (appends refused) alerts that it is full, not that no write reached it", async () => {
    const { token, id } = await setup({ alertEmail: "ops@example.com" });
    const have = (await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).byte_size as number;
    expect((await append(token, "f".repeat(CAP - have - 1))).status).toBe(200);
    h.clock.advance(30 * MIN);
    const refusedAt = h.clock.now();
    expect((await append(token, "refused: the stream is full")).status).toBe(403);
    await h.settle();
    await h.jobs.drain();
    await smtp!.waitFor(1); // the full-stream mail
    expect(smtp!.mails[0]!.subject).toBe("[notestream] backups.log is full");
    h.clock.advance(31 * MIN);
    await tick();
    await smtp!.waitFor(2);
    const alert = smtp!.mails[1]!;
    expect(alert.subject).toBe("[notestream] backups.log is full and refusing writes");
    expect(alert.text).toContain(`Appends to "backups.log" are being refused because the stream is full (since ${new Date(refusedAt).toISOString()})`);
    expect(alert.text).not.toContain("No write has reached");
    expect(alert.text).toContain("set retention or free space");
  });

  test("the alert carries at most the last 20 lines and 4 KB of them, whatever the stream holds (3 MB of lines)", async () => {
    const { token, id } = await setup();
    // About 3 MB in 100-byte lines, many lines to an append, then the last 25 lines one by one.
    const line = (i: number) => `line ${String(i).padStart(6, "0")} ${"l".repeat(87)}`;
    let i = 0;
    for (let a = 0; a < 30; a++) {
      const lines = Array.from({ length: 1000 }, () => line(i++));
      expect((await append(token, lines.join("\n"))).status).toBe(200);
    }
    for (let a = 0; a < 25; a++) expect((await append(token, line(i++))).status).toBe(200);
    expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).byte_size).toBeGreaterThan(3_000_000);
    h.clock.advance(61 * MIN);
    await tick();
    await smtp!.waitFor(1);
    const quoted = smtp!.mails[0]!.text.split("\n").filter((l) => l.startsWith("  line "));
    expect(quoted).toEqual(Array.from({ length: 20 }, (_, k) => `  ${line(i - 20 + k)}`));
    expect(smtp!.mails[0]!.text.length).toBeLessThan(4096 + 1024);
  });

  test("a huge last line is cut to 4 KB in the alert", async () => {
    const { token } = await setup();
    expect((await append(token, `start ${"h".repeat(2 * 1024 * 1024)} end`)).status).toBe(200);
    h.clock.advance(61 * MIN);
    await tick();
    await smtp!.waitFor(1);
    const text = smtp!.mails[0]!.text;
    expect(text.length).toBeLessThan(4096 + 1024);
    expect(text).toContain("hhhh end");
    expect(text).not.toContain("start h");
  });
});

describe("mail without an SMTP server", () => {
  test("each mail becomes an .eml file under <data dir>/outbox", async () => {
    h = await harness({ clock: new FakeClock() });
    const token = await h.token(await h.account("dev", "solo@example.com"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/cron.log/append", { token, body: { text: "ran" } })).json();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: 60 } } });
    h.clock.advance(61_000);
    await tick();
    const outbox = join(h.dataDir, "outbox");
    const files = readdirSync(outbox).filter((f) => f.endsWith(".eml"));
    expect(files).toHaveLength(1);
    const eml = readFileSync(join(outbox, files[0]!), "utf8");
    expect(eml).toMatch(/^To: solo@example.com$/m);
    expect(eml).toMatch(/^Subject: \[notestream\] cron.log has gone quiet$/m);
  });
});

describe("webhook auto-disable mail", () => {
  test("the owner hears when a webhook is disabled", async () => {
    smtp = await smtpServer();
    h = await harness({ env: { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" }, clock: new FakeClock(Date.now()) });
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("gone", { status: 410 }) });
    try {
      const token = await h.token(await h.account("dev", "hooks@example.com"));
      const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/h.log/append", { token, body: { text: "x" } })).json();
      await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `http://127.0.0.1:${gone.port}/hook` } } });
      await h.request("POST", "/api/v1/notes/by-filename/h.log/append", { token, body: { text: "y" } });
      await h.jobs.drain();
      await smtp.waitFor(1);
      expect(smtp.mails[0]!.to).toEqual(["hooks@example.com"]);
      expect(smtp.mails[0]!.subject).toBe("[notestream] the webhook of h.log was disabled");
      expect(smtp.mails[0]!.text).toContain("410 Gone");
    } finally {
      gone.stop(true);
    }
  });
});
