import { afterEach, describe, expect, test } from "bun:test";
import { runTask } from "../../src/schedule";
import { errorOf, FakeClock, harness, type Harness } from "../helpers/harness";
import { expectFieldError, outboxMails } from "../helpers/outbox";
import { receiver, type Received } from "../helpers/receiver";

let h: Harness;
let r: ReturnType<typeof receiver>;
afterEach(async () => {
  await h.close();
  r?.stop();
});

const BOT = "123456789:AAH-fake_bot_token";
const PO_USER = "u".repeat(29) + "1";
const PO_APP = "a".repeat(29) + "2";

/**
 * A Dev account, and one loopback receiver standing in for every provider: ntfy, Gotify and Matrix
 * are URLs already; Telegram's and Pushover's API origins point at it by configuration.
 */
async function setup(respond?: (req: Received, n: number) => Response | Promise<Response>) {
  r = receiver(respond);
  h = await harness({
    env: { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8", NOTESTREAM_WEBHOOK_TIMEOUT_MS: "400", NOTESTREAM_TELEGRAM_API_URL: r.url, NOTESTREAM_PUSHOVER_API_URL: `${r.url}/` },
    clock: new FakeClock(Date.now()),
  });
  const account = await h.account("dev", "owner@example.com");
  const token = await h.token(account);
  return { token, host: r.url.replace("http://", "") };
}

async function create(token: string, channel: Record<string, unknown>) {
  return h.request("POST", "/api/v1/channels", { token, body: { channel } });
}

async function made(token: string, channel: Record<string, unknown>): Promise<{ id: string; url: string; kind: string }> {
  const res = await create(token, channel);
  expect(res.status).toBe(201);
  return res.json();
}

async function testMessage(token: string, id: string) {
  const res = await h.request("POST", `/api/v1/channels/${id}/test`, { token });
  expect(res.status).toBe(202);
  expect((await res.json()).delivery_id).toMatch(/^dlv_/);
  await h.jobs.drain();
}

const json = (req: Received) => JSON.parse(req.body);

describe("each provider's own API", () => {
  test("ntfy: a JSON publish to the server's root with the topic, title, priority and tags; token as Bearer", async () => {
    const { token, host } = await setup();
    const c = await made(token, { name: "phone", url: `ntfy://tk_secrettoken123@${host}/ops-alerts?priority=5&tags=warning,skull` });
    expect(c).toMatchObject({ kind: "ntfy", url: `ntfy://tk_s****@${host}/ops-alerts?priority=5&tags=warning,skull` });
    await testMessage(token, c.id);
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.path).toBe("/");
    expect(r.received[0]!.headers.authorization).toBe("Bearer tk_secrettoken123");
    expect(json(r.received[0]!)).toMatchObject({ topic: "ops-alerts", title: "Test from notestream: phone", priority: 5, tags: ["warning", "skull"] });
  });

  test("Telegram: sendMessage under the bot's token, to the chat, title and text in one message", async () => {
    const { token } = await setup();
    const c = await made(token, { name: "tg", url: `tgram://${BOT}/-1001234567890` });
    expect(c.url).toBe("tgram://123456789:****/-1001234567890");
    await testMessage(token, c.id);
    expect(r.received[0]!.path).toBe(`/bot${BOT}/sendMessage`);
    const body = json(r.received[0]!);
    expect(body).toMatchObject({ chat_id: "-1001234567890", disable_web_page_preview: true });
    expect(body.text).toStartWith("Test from notestream: tg\nThis is a test message");
  });

  test("Telegram's 429 that says when only in its body (parameters.retry_after) is retried then, not at the default backoff", async () => {
    let n = 0;
    const { token } = await setup(() => (++n === 1 ? Response.json({ ok: false, error_code: 429, description: "Too Many Requests: retry after 2", parameters: { retry_after: 2 } }, { status: 429 }) : Response.json({ ok: true, result: {} })));
    const c = await made(token, { name: "tg", url: `tgram://${BOT}/-1001234567890` });
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "ran" } })).json();
    await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { expected_interval_seconds: 60, notify: [{ channel_id: c.id }] } } });
    h.clock.advance(61_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(r.received).toHaveLength(1);
    h.clock.advance(1_900);
    await h.jobs.drain();
    expect(r.received).toHaveLength(1);
    h.clock.advance(100);
    await h.jobs.drain();
    expect(r.received).toHaveLength(2);
  });

  test("Pushover: messages.json with the application token and the user key", async () => {
    const { token } = await setup();
    const c = await made(token, { name: "po", url: `pover://${PO_USER}@${PO_APP}` });
    expect(c.url).toBe("pover://uuuu****@aaaa****");
    await testMessage(token, c.id);
    expect(r.received[0]!.path).toBe("/1/messages.json");
    expect(json(r.received[0]!)).toMatchObject({ token: PO_APP, user: PO_USER, title: "Test from notestream: po", priority: 0 });
  });

  test("Gotify: /message under the server's path with X-Gotify-Key", async () => {
    const { token, host } = await setup();
    const c = await made(token, { name: "gotify", url: `gotify://${host}/gotify/AbCdEfGh12345` });
    expect(c.url).toBe(`gotify://${host}/gotify/AbCd****`);
    await testMessage(token, c.id);
    expect(r.received[0]!.path).toBe("/gotify/message");
    expect(r.received[0]!.headers["x-gotify-key"]).toBe("AbCdEfGh12345");
    expect(json(r.received[0]!)).toMatchObject({ title: "Test from notestream: gotify", priority: 5 });
  });

  test("Matrix: a PUT to the room's send endpoint whose transaction id is the delivery id, the same on a retry", async () => {
    let n = 0;
    const { token, host } = await setup(() => (++n === 1 ? new Response("busy", { status: 502 }) : Response.json({ event_id: "$e" })));
    const c = await made(token, { name: "room", url: `matrix://syt_accesstoken_abc@${host}/!ops:example.org` });
    expect(c.url).toBe(`matrix://syt_****@${host}/!ops:example.org`);
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "ran" } })).json();
    await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { expected_interval_seconds: 60, notify: [{ channel_id: c.id }] } } });
    h.clock.advance(61_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    h.clock.advance(60_000);
    await h.jobs.drain();
    expect(r.received).toHaveLength(2);
    expect(r.received[0]!.path).toMatch(/^\/_matrix\/client\/v3\/rooms\/!ops%3Aexample\.org\/send\/m\.room\.message\/dlv_[A-Za-z0-9]{20}$/);
    expect(r.received[1]!.path).toBe(r.received[0]!.path);
    expect(r.received[0]!.headers.authorization).toBe("Bearer syt_accesstoken_abc");
    expect(json(r.received[1]!)).toMatchObject({ msgtype: "m.text" });
    expect(json(r.received[1]!).body).toStartWith("jobs.log has gone quiet\nLATE: no write to jobs.log");
    expect(await (await h.request("GET", `/api/v1/channels/${c.id}`, { token })).json()).toMatchObject({ last_error: null, failures: 0, status: "enabled" });
  });

  test("https: a generic webhook is signed like a stream's; a Slack one is Slack's shape", async () => {
    const { token } = await setup();
    const generic = await made(token, { name: "hook", url: `${r.url}/hook?key=secret` });
    expect(generic.url).toBe(`${r.url}/****`);
    await testMessage(token, generic.id);
    expect(r.received[0]!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(json(r.received[0]!)).toMatchObject({ type: "webhook.test" });
    const slack = await made(token, { name: "slack", url: `${r.url}/services/T000/B000/XXXX`, format: "slack" });
    await testMessage(token, slack.id);
    expect(Object.keys(json(r.received[1]!))).toEqual(["text"]);
  });

  test("mailto: the message as a mail", async () => {
    const { token } = await setup();
    const c = await made(token, { name: "oncall", url: "mailto:OnCall@Example.com" });
    expect(c.url).toBe("mailto:oncall@example.com");
    await testMessage(token, c.id);
    await h.jobs.drain();
    const mails = outboxMails(h.dataDir);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toContain("To: oncall@example.com");
    expect(mails[0]).toContain("Subject: [notestream] Test from notestream: oncall");
  });
});

describe("the channel API", () => {
  test("bad URLs are 422 naming channel.url, a taken name 409, a private host refused without an allowed range", async () => {
    const { token } = await setup();
    await expectFieldError(await create(token, { name: "x", url: "tgram://123456789:abc" }), "channel.url", "invalid");
    await expectFieldError(await create(token, { name: "x", url: "ntfys://ntfy.sh/" }), "channel.url", "invalid");
    await expectFieldError(await create(token, { name: "x", url: "pover://short@short" }), "channel.url", "invalid");
    await expectFieldError(await create(token, { name: "x", url: "matrixs://tok@matrix.org/#alias" }), "channel.url", "invalid");
    await expectFieldError(await create(token, { name: "x", url: "irc://example.org/chan" }), "channel.url", "invalid");
    // A Gotify token too short is said to be, by its length (it is a secret): not "needs a token".
    const short = await create(token, { name: "x", url: "gotifys://gotify.example.com/APPTOK" });
    const said = (await errorOf(short as never)).message;
    expect(said).toContain("8 to 64 letters");
    expect(said).toContain("this one is 6 characters");
    expect(said).not.toContain("APPTOK");
    await expectFieldError(await create(token, { name: "x", url: "ntfys://10.0.0.5/topic" }), "channel.url", "refused");
    await expectFieldError(await create(token, { name: "x", url: "ntfys://ntfy.sh/topic", format: "slack" }), "channel.format", "not_applicable");
    await expectFieldError(await create(token, { name: "", url: "ntfys://ntfy.sh/topic" }), "channel.name", "blank");
    await made(token, { name: "phone", url: "ntfys://ntfy.sh/topic" });
    const dup = await create(token, { name: "phone", url: "ntfys://ntfy.sh/other" });
    expect(dup.status).toBe(409);
    expect((await errorOf(dup as never)).code).toBe("conflict");
  });

  test("list, read, rename and delete; deleting takes the channel out of every notify list", async () => {
    const { token } = await setup();
    const a = await made(token, { name: "a", url: "ntfys://ntfy.sh/a" });
    h.clock.advance(1);
    const b = await made(token, { name: "b", url: "ntfys://ntfy.sh/b" });
    const list = await h.request("GET", "/api/v1/channels", { token });
    expect(list.headers.get("x-total-count")).toBe("2");
    expect((await list.json()).map((c: { name: string }) => c.name)).toEqual(["a", "b"]);
    expect(await (await h.request("PATCH", `/api/v1/channels/${a.id}`, { token, body: { channel: { name: "renamed" } } })).json()).toMatchObject({ name: "renamed" });
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "x" } })).json();
    const patched = await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { notify: [{ channel_id: a.id }, { channel_id: b.id, events: ["alerts"] }] } } });
    expect((await patched.json()).notify).toEqual([
      { channel_id: a.id, events: ["alerts"], batch_seconds: null },
      { channel_id: b.id, events: ["alerts"], batch_seconds: null },
    ]);
    expect((await h.request("DELETE", `/api/v1/channels/${a.id}`, { token })).status).toBe(200);
    expect((await (await h.request("GET", `/api/v1/notes/${note.id}`, { token })).json()).notify).toEqual([{ channel_id: b.id, events: ["alerts"], batch_seconds: null }]);
    expect((await h.request("GET", `/api/v1/channels/${a.id}`, { token })).status).toBe(404);
  });

  test("deleting a channel ends the escalations to it and the digests sent to it; other streams' escalations stay", async () => {
    const { token } = await setup();
    const lead = await made(token, { name: "lead", url: "ntfys://ntfy.sh/lead" });
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "x" } })).json();
    const other = await (await h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token, body: { text: "x" } })).json();
    const escalation = { expected_interval_seconds: 60, repeat_alert_seconds: 600, escalate_after_seconds: 3600 };
    expect((await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { ...escalation, escalate_to: lead.id } } })).status).toBe(200);
    expect((await h.request("PATCH", `/api/v1/notes/${other.id}`, { token, body: { note: { ...escalation, escalate_to: "boss@example.com" } } })).status).toBe(200);
    const digest = await h.request("POST", "/api/v1/digests", { token, body: { digest: { schedule: "0 8 * * *", channel_id: lead.id } } });
    expect(digest.status).toBe(201);
    expect((await h.request("DELETE", `/api/v1/channels/${lead.id}`, { token })).status).toBe(200);
    const after = await (await h.request("GET", `/api/v1/notes/${note.id}`, { token })).json();
    expect([after.escalate_to, after.escalate_after_seconds, after.repeat_alert_seconds]).toEqual([null, null, 600]);
    // What is stored is what a PATCH would accept: the note takes further changes.
    expect((await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { title: "jobs" } } })).status).toBe(200);
    const untouched = await (await h.request("GET", `/api/v1/notes/${other.id}`, { token })).json();
    expect([untouched.escalate_to, untouched.escalate_after_seconds]).toEqual(["boss@example.com", 3600]);
    expect(await (await h.request("GET", "/api/v1/digests", { token })).json()).toEqual([]);
  });

  test("notify names channels of the workspace only, each once", async () => {
    const { token } = await setup();
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "x" } })).json();
    const c = await made(token, { name: "a", url: "ntfys://ntfy.sh/a" });
    const patch = (notify: unknown) => h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { notify } } });
    await expectFieldError(await patch([{ channel_id: "chn_nope" }]), "note.notify[0].channel_id", "unknown_channel");
    await expectFieldError(await patch([{ channel_id: c.id }, { channel_id: c.id }]), "note.notify[1].channel_id", "duplicate");
    await expectFieldError(await patch([{ channel_id: c.id, events: ["everything"] }]), "note.notify[0].events", "invalid");
    const other = await h.token(await h.account("dev", "other@example.com"));
    const theirs = await made(other, { name: "theirs", url: "ntfys://ntfy.sh/theirs" });
    await expectFieldError(await patch([{ channel_id: theirs.id }]), "note.notify[0].channel_id", "unknown_channel");
  });
});

describe("alerts to channels", () => {
  test("a late stream's alert goes to each channel that takes alerts; the recovery too", async () => {
    const { token, host } = await setup();
    const c = await made(token, { name: "phone", url: `ntfy://${host}/ops` });
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "ran" } })).json();
    await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { expected_interval_seconds: 60, notify: [{ channel_id: c.id, events: ["alerts"] }] } } });
    h.clock.advance(61_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(r.received).toHaveLength(1);
    expect(json(r.received[0]!)).toMatchObject({ topic: "ops", title: "jobs.log has gone quiet", priority: 4 });
    await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "back" } });
    await h.jobs.drain();
    expect(json(r.received[1]!)).toMatchObject({ title: "jobs.log is writing again", priority: 3 });
  });

  test("an escalation to a channel id goes to that channel", async () => {
    const { token, host } = await setup();
    const c = await made(token, { name: "lead", url: `gotify://${host}/AbCdEfGh12345` });
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "ran" } })).json();
    const patched = await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { expected_interval_seconds: 60, escalate_after_seconds: 60, escalate_to: c.id } } });
    expect((await patched.json()).escalate_to).toBe(c.id);
    await expectFieldError(await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { escalate_to: "chn_unknown" } } }), "note.escalate_to", "unknown_channel");
    // Spelled otherwise, a channel id is neither checked as one nor an address: refused, not stored.
    for (const spelled of ["CHN_unknown", ` ${c.id}`]) {
      await expectFieldError(await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { escalate_to: spelled } } }), "note.escalate_to", "invalid");
    }
    h.clock.advance(61_000);
    await runTask(h.deps, "deadman");
    h.clock.advance(60_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    expect(r.received).toHaveLength(1);
    expect(json(r.received[0]!).title).toStartWith("escalated: jobs.log has been late for");
  });

  test("ten failed deliveries in a row disable the channel and mail the owner once; a PATCH re-enables it", async () => {
    const { token, host } = await setup(() => new Response("down", { status: 500 }));
    const c = await made(token, { name: "phone", url: `ntfy://${host}/ops` });
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "ran" } })).json();
    await h.request("PATCH", `/api/v1/notes/${note.id}`, { token, body: { note: { expected_interval_seconds: 60, notify: [{ channel_id: c.id }] } } });
    h.clock.advance(61_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "back" } });
    for (let i = 0; i < 12; i++) {
      await h.jobs.drain();
      h.clock.advance(7 * 3600_000);
    }
    await h.jobs.drain();
    const channel = await (await h.request("GET", `/api/v1/channels/${c.id}`, { token })).json();
    expect(channel).toMatchObject({ status: "disabled", failures: 10 });
    expect(channel.last_error).toContain("disabled after 10 failures in a row");
    // The recovery waiting behind the alert was dropped with the channel's queue: ten attempts in all.
    expect(r.received).toHaveLength(10);
    const mails = outboxMails(h.dataDir).filter((m) => m.includes('Deliveries to the channel "phone"'));
    expect(mails).toHaveLength(1);
    expect(mails[0]).toContain("To: owner@example.com");
    expect(mails[0]).not.toContain("tk_");
    expect(await (await h.request("PATCH", `/api/v1/channels/${c.id}`, { token, body: { channel: {} } })).json()).toMatchObject({ status: "enabled", failures: 0 });
  });
});
