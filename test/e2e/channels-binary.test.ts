// Channels on the compiled binary, through the real HTTP API, against loopback servers that answer
// as ntfy, Telegram, Pushover, Gotify, Matrix and Slack do (test/helpers/providers.ts) and a
// loopback SMTP server: each provider's test message in its own shape; a fail signal reaching
// every channel; Telegram's 429 retried after its retry_after; Pushover's 400 shown in its own
// words; a burst of lines under flood control; a digest by mail and one sent now to a channel; a
// rule failing a stream. On PostgreSQL a second instance shares the first one's database, so every
// test's jobs run on both, and one test spreads its appends over both: every line once and in
// order, one alert per spell. One server (two on PostgreSQL) serves every test; each test has
// channels and streams of its own, so they run side by side.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  append,
  appendPath,
  buildBinary,
  cleanup,
  databaseUrlFor,
  getNote,
  onPostgres,
  provision,
  request,
  startServer,
  tempDir,
  type RunningServer,
} from "../helpers/binary";
import { smtpServer } from "../helpers/mail";
import { providerServer, type Provider } from "../helpers/providers";

const BOT = "123456789:AAH-e2e_bot_token";
const CHAT = "-1001234567890";
const PO_APP = "a".repeat(29) + "1";
const PO_USER = "u".repeat(29) + "1";
/** Well-formed, but no Pushover user has it. */
const PO_USER_UNKNOWN = "x".repeat(29) + "9";
const GOTIFY_APP = "AppTokenE2e01";
const GOTIFY_RULES_APP = "AppTokenRules1";
const MATRIX_TOKEN = "syt_e2e_access_token";
const ROOM = "!ops:example.org";
const BOTH_ROOM = "!both:example.org";

let A: RunningServer;
/** On PostgreSQL, a second instance on A's database; on SQLite, A again. */
let B: RunningServer;
let smtp: Awaited<ReturnType<typeof smtpServer>>;
const providers = providerServer({
  telegramBots: [BOT],
  telegramChats: [CHAT],
  pushoverApps: [PO_APP],
  pushoverUsers: [PO_USER],
  gotifyApps: [GOTIFY_APP, GOTIFY_RULES_APP],
  matrixTokens: [MATRIX_TOKEN],
});
let token = "";

beforeAll(async () => {
  buildBinary();
  smtp = await smtpServer();
  const dataDir = tempDir("data");
  token = provision(dataDir).token;
  const env = {
    NOTESTREAM_SMTP_URL: smtp.url,
    NOTESTREAM_TELEGRAM_API_URL: providers.url,
    NOTESTREAM_PUSHOVER_API_URL: providers.url,
    NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8",
    NOTESTREAM_MIN_INTERVAL_SECONDS: "1",
    NOTESTREAM_LOG_REQUESTS: "false",
  };
  A = await startServer(dataDir, env);
  B = onPostgres ? await startServer(tempDir("data-b"), { ...env, NOTESTREAM_DATABASE_URL: databaseUrlFor(dataDir) }) : A;
}, 90_000);

afterAll(async () => {
  await B?.stop().catch(() => {});
  await A?.stop().catch(() => {});
  providers.stop();
  await smtp?.stop();
  await cleanup();
});

async function api(method: string, path: string, json?: unknown, base = A.base) {
  return request(base, method, `/api/v1${path}`, { token, json });
}

async function channel(name: string, url: string, format?: string): Promise<string> {
  const r = await api("POST", "/channels", { channel: { name, url, ...(format ? { format } : {}) } });
  expect({ name, status: r.status, body: r.body }).toMatchObject({ name, status: 201 });
  return r.body.id as string;
}

/** A new stream with one line; its id. */
async function stream(filename: string): Promise<string> {
  const r = await append(A.base, token, filename, "started");
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function patchNote(id: string, note: Record<string, unknown>, base = A.base) {
  const r = await api("PATCH", `/notes/${id}`, { note }, base);
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 });
  return r.body;
}

async function signal(filename: string, text: string, status?: "ok" | "fail", base = A.base) {
  const r = await request(base, "POST", appendPath(filename), { token, json: status ? { text, status } : { text } });
  expect(r.status).toBe(200);
}

/** Polls until the check holds; bounded in time. */
async function until(what: string, ms: number, check: () => boolean | Promise<boolean>, everyMs = 25): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/** The text a provider shows, wherever its API puts it. */
function shown(provider: Provider, body: any): string {
  if (provider === "ntfy" || provider === "pover" || provider === "gotify") return `${body.title}\n${body.message}`;
  if (provider === "matrix") return body.body;
  return body.text;
}

const accepted = (provider: Provider, to: string, containing: string) => providers.accepted(provider, to).filter((r) => shown(provider, r.body).includes(containing));
const mailsTo = (address: string, subject: string) => smtp.mails.filter((m) => m.to.includes(address) && m.subject === subject);

const ONCALL = "oncall@example.com";
const SLACK_PATH = "/services/T0E2E/B0E2E/e2eSecret";
/** One channel of each kind, all receiving the alerts of one stream: [provider, addressee, channel name, url, format]. */
const EVERY_KIND = () =>
  [
    ["ntfy", "e2e-phone", "phone", `ntfy://${providers.host}/e2e-phone?tags=rotating_light`],
    ["tgram", CHAT, "telegram", `tgram://${BOT}/${CHAT}`],
    ["pover", PO_USER, "pushover", `pover://${PO_USER}@${PO_APP}`],
    ["gotify", GOTIFY_APP, "gotify", `gotify://${providers.host}/${GOTIFY_APP}`],
    ["matrix", ROOM, "matrix", `matrix://${MATRIX_TOKEN}@${providers.host}/${ROOM}`],
    ["slack", SLACK_PATH, "slack", `${providers.url}${SLACK_PATH}`, "slack"],
  ] as const;

/** A channel of each kind of EVERY_KIND and a mailto one, named after `label`, for one test. */
async function everyKindChannels(label: string) {
  const ids: Record<string, string> = {};
  for (const [provider, , name, url, format] of EVERY_KIND()) ids[provider] = await channel(`${label} ${name}`, url, format);
  return { ids, mailId: await channel(`${label} oncall`, `mailto:${ONCALL}`) };
}

test.concurrent("each kind of channel's test message arrives in its provider's own API shape", async () => {
  const { ids, mailId } = await everyKindChannels("test");
  for (const id of [...Object.values(ids), mailId]) {
    const r = await api("POST", `/channels/${id}/test`);
    expect(r.status).toBe(202);
    expect(r.body.delivery_id).toMatch(/^dlv_/);
  }
  const testOf = (provider: Provider, to: string) => accepted(provider, to, "Test from notestream");
  await until("every provider's test message", 20_000, () => EVERY_KIND().every(([p, to]) => testOf(p, to).length === 1));
  await until("the test mail", 20_000, () => mailsTo(ONCALL, "[notestream] Test from notestream: test oncall").length === 1);

  const [ntfy] = testOf("ntfy", "e2e-phone");
  expect(ntfy!.path).toBe("/");
  expect(ntfy!.body).toMatchObject({ topic: "e2e-phone", title: "Test from notestream: test phone", priority: 3, tags: ["rotating_light"] });
  expect(ntfy!.body.message).toStartWith('This is a test message to the channel "test phone".');

  const [tg] = testOf("tgram", CHAT);
  expect(tg!.path).toBe(`/bot${BOT}/sendMessage`);
  expect(tg!.body).toMatchObject({ chat_id: CHAT, disable_web_page_preview: true });
  expect(tg!.body.text).toStartWith('Test from notestream: test telegram\nThis is a test message to the channel "test telegram".');

  const [po] = testOf("pover", PO_USER);
  expect(po!.body).toMatchObject({ token: PO_APP, user: PO_USER, title: "Test from notestream: test pushover", priority: 0 });

  const [gotify] = testOf("gotify", GOTIFY_APP);
  expect(gotify!.headers["x-gotify-key"]).toBe(GOTIFY_APP);
  expect(gotify!.body).toMatchObject({ title: "Test from notestream: test gotify", priority: 5 });

  const [mx] = testOf("matrix", ROOM);
  expect(mx!.method).toBe("PUT");
  expect(mx!.path).toMatch(/^\/_matrix\/client\/v3\/rooms\/!ops%3Aexample\.org\/send\/m\.room\.message\/dlv_[A-Za-z0-9]+$/);
  expect(mx!.headers.authorization).toBe(`Bearer ${MATRIX_TOKEN}`);
  expect(mx!.body).toMatchObject({ msgtype: "m.text" });
  expect(mx!.body.body).toStartWith("Test from notestream: test matrix\n");

  const [slack] = testOf("slack", SLACK_PATH);
  expect(Object.keys(slack!.body)).toEqual(["text"]);

  expect(mailsTo(ONCALL, "[notestream] Test from notestream: test oncall")[0]!.text).toContain('This is a test message to the channel "test oncall".');

  // Each channel shows the attempt went through.
  for (const id of [...Object.values(ids), mailId]) {
    await until(`channel ${id}'s attempt recorded`, 5_000, async () => (await api("GET", `/channels/${id}`)).body.last_attempt_at !== null);
    expect((await api("GET", `/channels/${id}`)).body).toMatchObject({ status: "enabled", failures: 0, last_error: null });
  }
}, 40_000);

test.concurrent("a fail signal reaches every channel, the mailto one as a mail; Telegram's 429 is retried after its retry_after and delivered once", async () => {
  const { ids, mailId } = await everyKindChannels("alerts");
  const id = await stream("e2e-alerts.log");
  await patchNote(id, { notify: [...Object.values(ids), mailId].map((channel_id) => ({ channel_id, events: ["alerts"] })) });
  const title = "e2e-alerts.log reported a failure";
  providers.floodWaitOnce(CHAT, 1, title);
  await signal("e2e-alerts.log", "backup: exit 3", "fail");

  await until("the alert at every provider", 20_000, () => EVERY_KIND().every(([p, to]) => p === "tgram" || accepted(p, to, title).length >= 1));
  // Past the queue's first backoff (10 s), so a retry that ignored retry_after fails on its timing below.
  await until("the alert at Telegram", 15_000, () => accepted("tgram", CHAT, title).length >= 1, 100);
  await until("the alert mail to the mailto channel", 20_000, () => mailsTo(ONCALL, `[notestream] ${title}`).length >= 1);
  for (const [p, to] of EVERY_KIND()) expect(shown(p, accepted(p, to, title)[0]!.body)).toContain("FAILED: e2e-alerts.log reported a failure: backup: exit 3");
  expect(mailsTo(ONCALL, `[notestream] ${title}`)[0]!.text).toContain("backup: exit 3");
  // An alert that needs eyes goes at the push providers' higher priority.
  expect(accepted("ntfy", "e2e-phone", title)[0]!.body.priority).toBe(4);
  expect(accepted("pover", PO_USER, title)[0]!.body.priority).toBe(1);
  expect(accepted("gotify", GOTIFY_APP, title)[0]!.body.priority).toBe(8);

  // Telegram refused the first try with 429 and retry_after 1: the retry came after that second
  // (not after the queue's own 10 s backoff), and was taken; no message went twice.
  const tries = providers.to("tgram", CHAT).filter((r) => r.body.text.includes(title));
  expect(tries.map((r) => r.status)).toEqual([429, 200]);
  expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(900);
  expect(tries[1]!.at - tries[0]!.at).toBeLessThan(5_000);
  await Bun.sleep(1_500);
  for (const [p, to] of EVERY_KIND()) expect({ p, n: accepted(p, to, title).length }).toEqual({ p, n: 1 });
  expect(mailsTo(ONCALL, `[notestream] ${title}`)).toHaveLength(1);
  expect((await api("GET", `/channels/${ids.tgram}`)).body).toMatchObject({ status: "enabled", failures: 0, last_error: null });
}, 40_000);

test.concurrent("a Pushover 400 shows as the channel's last_error in Pushover's own words", async () => {
  const id = await channel("pushover-wrong-user", `pover://${PO_USER_UNKNOWN}@${PO_APP}`);
  expect((await api("POST", `/channels/${id}/test`)).status).toBe(202);
  await until("the test's attempt recorded", 15_000, async () => (await api("GET", `/channels/${id}`)).body.last_attempt_at !== null);
  expect((await api("GET", `/channels/${id}`)).body).toMatchObject({ status: "enabled", last_error: "HTTP 400: user identifier is invalid" });
  expect(providers.to("pover", PO_USER_UNKNOWN).map((r) => r.status)).toEqual([400]);
}, 30_000);

test.concurrent("30 quick appends to a stream sending lines: 20 messages, then one gathered message 15 s later; every line once, in order", async () => {
  const topic = "e2e-flood";
  const chn = await channel("flood", `ntfy://${providers.host}/${topic}`);
  const id = await stream("flood.log");
  await patchNote(id, { notify: [{ channel_id: chn, events: ["lines"] }] });
  const sent = Array.from({ length: 30 }, (_, i) => `flood line ${i + 1}`);
  for (const text of sent) await signal("flood.log", text);

  const messages = () => providers.accepted("ntfy", topic);
  await until("the gathered message after 20 messages", 30_000, () => messages().length >= 21, 100);
  await Bun.sleep(500);
  const got = messages();
  expect(got.map((m) => m.body.title)).toEqual(got.map(() => "flood.log"));
  expect(got.slice(0, 20).map((m) => m.body.message)).toEqual(sent.slice(0, 20));
  expect(got.map((m) => m.body.message)).toEqual([...sent.slice(0, 20), sent.slice(20).join("\n")]);
  // 15 s after the 20th message's send began; its own travel to the receiver comes off that.
  expect(got[20]!.at - got[19]!.at).toBeGreaterThanOrEqual(13_000);
}, 40_000);

test.concurrent("a digest on a seconds schedule arrives by SMTP with the streams' counts; send now goes to a channel", async () => {
  const topic = "e2e-digest";
  const chn = await channel("digests", `ntfy://${providers.host}/${topic}`);
  await stream("digest-busy.log");
  await stream("digest-quiet.log");
  // Digests go out at the sweep every 15 s of the clock: start well before one, so every line below
  // is written before the first digest is composed.
  const intoWindow = Date.now() % 15_000;
  if (intoWindow < 300 || intoWindow > 8_000) await Bun.sleep(15_000 - intoWindow + 300);
  const streams = ["digest-busy.log", "digest-quiet.log"];
  const mailed = await api("POST", "/digests", { digest: { schedule: "*/5 * * * * *", email: "team@example.com", streams, last_lines: 2 } });
  expect(mailed.status).toBe(201);
  const now = await api("POST", "/digests", { digest: { schedule: "0 0 1 1 *", channel_id: chn, streams: ["digest-busy.log"], last_lines: 1 } });
  expect(now.status).toBe(201);

  const written = ["deploy 41 ok", "deploy 42 ok\ndeploy 43 started"];
  for (const text of written) await signal("digest-busy.log", text);
  await signal("digest-busy.log", "rc=1", "fail");
  const bytes = [...written, "rc=1"].reduce((n, t) => n + Buffer.byteLength(t) + 1, 0);
  const summary = `digest-busy.log: 4 lines, ${bytes} B, 1 alert; failing now`;

  const subject = "[notestream] Digest: 4 lines, 1 alert in 1 stream";
  await until("the digest mail", 20_000, () => mailsTo("team@example.com", subject).length >= 1, 100);
  expect((await api("DELETE", `/digests/${mailed.body.id}`)).status).toBe(200);
  const mail = mailsTo("team@example.com", subject)[0]!;
  expect(mail.text).toContain(`1 stream of 2 wrote 4 lines (${bytes} B); 1 alert.`);
  expect(mail.text).toContain(`${summary}\n  deploy 43 started\n  rc=1`);
  expect(mail.text).toContain("Nothing new (1): digest-quiet.log (not watched)");

  const sentNow = await api("POST", `/digests/${now.body.id}/send`);
  expect(sentNow.status).toBe(202);
  expect(sentNow.body.last_sent_at).not.toBeNull();
  await until("the digest sent now", 10_000, () => providers.accepted("ntfy", topic).length >= 1);
  const [digest] = providers.accepted("ntfy", topic);
  expect(digest!.body.title).toBe("Digest: 4 lines, 1 alert in 1 stream");
  expect(digest!.body.message).toContain(`${summary}\n  rc=1`);
}, 40_000);

test.concurrent("a rule with then: fail turns a matching line into a failure, and the alert reaches the channel", async () => {
  const chn = await channel("rules", `gotify://${providers.host}/${GOTIFY_RULES_APP}`);
  const id = await stream("rules.log");
  const patched = await patchNote(id, { rules: [{ match: "error:", then: "fail" }], notify: [{ channel_id: chn, events: ["alerts"] }] });
  expect(patched.rules).toEqual([{ match: "error:", regex: false, case_sensitive: false, then: "fail" }]);
  await signal("rules.log", "all good: 3 files copied");
  expect((await getNote(A.base, token, "rules.log")).deadman_status).toBe("off");
  await signal("rules.log", "ERROR: disk full");
  expect((await getNote(A.base, token, "rules.log")).deadman_status).toBe("failing");
  await until("the rule's alert at the channel", 15_000, () => providers.accepted("gotify", GOTIFY_RULES_APP).length >= 1);
  await Bun.sleep(300);
  expect(providers.accepted("gotify", GOTIFY_RULES_APP).map((r) => r.body)).toEqual([
    expect.objectContaining({ title: "rules.log reported a failure", message: "FAILED: rules.log reported a failure: ERROR: disk full", priority: 8 }),
  ]);
}, 30_000);

describe.skipIf(!onPostgres)("two instances on one PostgreSQL database", () => {
  test.concurrent("appends spread over both, jobs run by both: every line to the channel once and in order, one alert per spell", async () => {
    const topic = "e2e-both-lines";
    const lines = await channel("both-lines", `ntfy://${providers.host}/${topic}`);
    const alerts = await channel("both-alerts", `matrix://${MATRIX_TOKEN}@${providers.host}/${BOTH_ROOM}`);
    const id = await stream("both.log");
    await patchNote(id, { notify: [{ channel_id: lines, events: ["lines"] }, { channel_id: alerts, events: ["alerts"] }] }, B.base);
    const at = (i: number) => (i % 2 === 0 ? A.base : B.base);
    /** One phase: its appends at once, alternating between the instances. */
    const phase = (texts: string[], status?: "ok" | "fail") => Promise.all(texts.map((t, i) => signal("both.log", t, status, at(i))));
    const plain = (from: number, n: number) => Array.from({ length: n }, (_, i) => `both line ${from + i}`);
    await phase(plain(1, 12));
    await phase(["first failure a", "first failure b", "first failure c"], "fail");
    await phase(plain(13, 6));
    await phase(["all well again"], "ok");
    await phase(plain(19, 4));
    await phase(["second failure a", "second failure b"], "fail");

    const stored = ((await api("GET", "/notes/by-filename/both.log/lines?last=1000", undefined, B.base)).body.lines as { text: string }[]).map((l) => l.text);
    expect(stored).toHaveLength(29);
    const expected = stored.slice(1);
    const delivered = () => providers.accepted("ntfy", topic).flatMap((m) => (m.body.message as string).split("\n"));
    await until(`all ${expected.length} lines delivered`, 25_000, () => delivered().length >= expected.length, 100);
    const room = () => providers.accepted("matrix", BOTH_ROOM).map((r) => r.body.body.split("\n")[0] as string);
    await until("three alerts", 15_000, () => room().length >= 3);
    // Both schedulers sweep every 2 s: past a sweep on each, still nothing more.
    await Bun.sleep(2_500);
    expect(delivered()).toEqual(expected);
    expect(room()).toEqual(["both.log reported a failure", "both.log reported ok", "both.log reported a failure"]);
  }, 40_000);
});
