/**
 * A stream's rules on appended lines: fail and ok act as the signals they name, alert mails the
 * line (at most once a minute per stream, never while paused or quiet); the first rule that
 * matches a line acts; an explicit status wins; inbox lines are tried too; a regex runs on RE2
 * (linear time); bad rules are 422s naming the field.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { FakeClock, harness, type Harness } from "../helpers/harness";
import { smtpServer } from "../helpers/mail";
import { receiver } from "../helpers/receiver";

let h: Harness;
let smtp: Awaited<ReturnType<typeof smtpServer>> | undefined;
let hook: ReturnType<typeof receiver> | undefined;
afterEach(async () => {
  await h.close();
  await smtp?.stop();
  hook?.stop();
  smtp = hook = undefined;
});

const SEC = 1000;
type Rule = { match: string; regex?: boolean; case_sensitive?: boolean; then: "fail" | "ok" | "alert" };

/** A Dev account's token, its stream app.log with these rules; mail to a loopback SMTP server. */
async function setup(rules: Rule[] | null = null) {
  smtp = await smtpServer();
  // Real time: the webhook receiver checks signature timestamps against its own clock.
  h = await harness({ env: { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" }, clock: new FakeClock(Date.now()) });
  const token = await h.token(await h.account("dev", "owner@example.com"), ["read", "write"]);
  const created = await h.request("POST", "/api/v1/notes/by-filename/app.log/append", { token, body: { text: "started" } });
  const id = (await created.json()).id as string;
  if (rules) expect((await patch(token, id, { rules })).status).toBe(200);
  return { token, id };
}

const patch = (token: string, id: string, note: Record<string, unknown>) => h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } });
const append = (token: string, body: unknown) => h.request("POST", "/api/v1/notes/by-filename/app.log/append", { token, body });
const status = async (token: string) => (await (await h.request("GET", "/api/v1/notes/by-filename/app.log", { token })).json()).deadman_status as string;
/** The mails sent so far, once every queued job has run. */
async function mails() {
  await h.jobs.drain();
  return smtp!.mails;
}

describe("what a matching rule does", () => {
  test("fail fails the stream and mails as a fail signal does; ok brings it back; a line no rule matches changes nothing", async () => {
    const { token } = await setup([{ match: "FAILED", then: "fail" }, { match: "backup done", then: "ok" }]);
    await append(token, { text: "copying files" });
    expect(await status(token)).toBe("off");
    await append(token, { text: "rsync FAILED: disk full" });
    expect(await status(token)).toBe("failing");
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.subject).toBe("[notestream] app.log reported a failure");
    expect(smtp!.mails[0]!.text).toContain("rsync FAILED: disk full");
    await append(token, { text: "backup done in 40s" });
    expect(await status(token)).toBe("off");
    await smtp!.waitFor(2);
    expect(smtp!.mails[1]!.subject).toBe("[notestream] app.log is writing again");
  });

  test("alert mails the line to the stream's recipient, posts it to the webhook with alert_webhook and to its alert channels; the status stays", async () => {
    hook = receiver();
    const { token, id } = await setup([{ match: "OOM", then: "alert" }]);
    const channel = await (await h.request("POST", "/api/v1/channels", { token, body: { channel: { name: "phone", url: `ntfy://${hook.url.replace("http://", "")}/ops` } } })).json();
    const settings = { webhook_url: hook.url, webhook_format: "slack", alert_email: "ops@example.com", alert_webhook: true, notify: [{ channel_id: channel.id, events: ["alerts"] }] };
    expect((await patch(token, id, settings)).status).toBe(200);
    await append(token, { text: "worker 3 killed: OOM at 2.1 GB" });
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.subject).toBe("[notestream] app.log: a line matched a rule");
    expect(smtp!.mails[0]!.to).toContain("ops@example.com");
    expect(smtp!.mails[0]!.text).toContain("  worker 3 killed: OOM at 2.1 GB");
    expect(smtp!.mails[0]!.text).toContain('matched the rule "OOM"');
    await h.jobs.drain();
    const texts = hook.received.map((r) => (JSON.parse(r.body) as { text: string }).text);
    expect(texts).toContain('[app.log] RULE: a line of app.log matched "OOM": worker 3 killed: OOM at 2.1 GB');
    expect(hook.received.map((r) => JSON.parse(r.body))).toContainEqual(expect.objectContaining({ topic: "ops", title: "app.log: a line matched a rule" }));
    expect(await status(token)).toBe("off");
  });

  test("the first rule that matches a line acts, later ones are not tried on it", async () => {
    const { token } = await setup([{ match: "retry", then: "ok" }, { match: "error", then: "fail" }]);
    await append(token, { text: "error: timeout, retry 1 of 3" });
    expect(await status(token)).toBe("off");
    await append(token, { text: "error: gave up" });
    expect(await status(token)).toBe("failing");
  });

  test("substrings ignore case unless case_sensitive; a substring takes regex characters literally; a regex matches a pattern", async () => {
    const { token, id } = await setup([{ match: "Error", case_sensitive: true, then: "fail" }]);
    await append(token, { text: "ERROR in upper case" });
    expect(await status(token)).toBe("off");
    await append(token, { text: "an Error" });
    expect(await status(token)).toBe("failing");

    await patch(token, id, { rules: [{ match: "exit=[1-9]", then: "fail" }, { match: "ok.*done", then: "ok" }] });
    await append(token, { text: "ok, all done" });
    await append(token, { text: "exit=3" });
    expect(await status(token)).toBe("failing");
    await append(token, { text: "said OK.*DONE" });
    expect(await status(token)).toBe("off");
    await append(token, { text: "exit=[1-9]" });
    expect(await status(token)).toBe("failing");
    await append(token, { text: "ok.*done" });

    await patch(token, id, { rules: [{ match: "^exit=[1-9]", regex: true, then: "fail" }, { match: "^EXIT=0$", regex: true, case_sensitive: true, then: "ok" }] });
    await append(token, { text: "job exit=3" });
    expect(await status(token)).toBe("off");
    await append(token, { text: "Exit=3" });
    expect(await status(token)).toBe("failing");
    await append(token, { text: "exit=0" });
    expect(await status(token)).toBe("failing");
    await append(token, { text: "EXIT=0" });
    expect(await status(token)).toBe("off");
  });

  test("a status sent with the append wins over what the rules say", async () => {
    const { token } = await setup([{ match: "error", then: "fail" }, { match: "fine", then: "ok" }]);
    await append(token, { text: "error count: 0", status: "ok" });
    expect(await status(token)).toBe("off");
    await append(token, { text: "all fine", status: "fail" });
    expect(await status(token)).toBe("failing");
  });

  test("an append of several lines: the last fail or ok decides, and it raises one alert at most", async () => {
    const { token } = await setup([{ match: "PANIC", then: "alert" }, { match: "error", then: "fail" }, { match: "recovered", then: "ok" }]);
    await append(token, { text: "error 1\nrecovered\nerror 2\nplain\n" });
    expect(await status(token)).toBe("failing");
    await append(token, { text: "PANIC one\nerror 3\nrecovered\nPANIC two\n" });
    expect(await status(token)).toBe("off");
    const sent = await mails();
    const alerts = sent.filter((m) => m.subject === "[notestream] app.log: a line matched a rule");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.text).toContain("  PANIC one");
  });

  test("inbox lines are tried too: a payload whose line matches fails the stream", async () => {
    const { token, id } = await setup([{ match: "severity=critical", then: "fail" }]);
    const inbox = (await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json()) as { token: string };
    expect((await h.request("POST", `/h/${inbox.token}`, { body: "db1 severity=critical: replica lag", headers: { "content-type": "text/plain" } })).status).toBe(202);
    await h.jobs.drain();
    expect(await status(token)).toBe("failing");
  });
});

describe("rule alerts are flood-controlled and held like other alerts", () => {
  test("one rule alert a minute per stream: a burst of matching lines is one mail; a minute on, the next match mails again", async () => {
    const { token } = await setup([{ match: "timeout", then: "alert" }]);
    for (let i = 0; i < 5; i++) {
      await append(token, { text: `timeout ${i}` });
      h.clock.advance(10 * SEC);
    }
    expect((await mails()).length).toBe(1);
    h.clock.advance(15 * SEC);
    await append(token, { text: "timeout 5" });
    const sent = await mails();
    expect(sent.length).toBe(2);
    expect(sent[1]!.text).toContain("  timeout 5");
  });

  test("a paused or quiet stream sends no rule alert, and owes none afterwards", async () => {
    const { token, id } = await setup([{ match: "timeout", then: "alert" }]);
    expect((await h.request("POST", `/api/v1/notes/${id}/pause`, { token })).status).toBe(200);
    await append(token, { text: "timeout while paused" });
    const until = new Date(h.clock.now() + 3600 * SEC).toISOString();
    expect((await patch(token, id, { quiet_until: until })).status).toBe(200);
    await append(token, { text: "timeout while quiet" });
    h.clock.advance(3601 * SEC);
    expect(await mails()).toHaveLength(0);
    await append(token, { text: "timeout after" });
    const sent = await mails();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text).toContain("  timeout after");
  });

  test("on a plan without the dead-man's switch rules still set the status, and alert rules mail nothing", async () => {
    smtp = await smtpServer();
    // The alternate profile's Dev plan has the API but not the switch.
    h = await harness({ profile: "alternate", env: { NOTESTREAM_SMTP_URL: smtp.url } });
    const token = await h.token(await h.account("dev", "dev@example.com"), ["read", "write"]);
    const id = (await (await append(token, { text: "started" })).json()).id;
    expect((await patch(token, id, { rules: [{ match: "boom", then: "alert" }, { match: "fail", then: "fail" }] })).status).toBe(200);
    await append(token, { text: "boom" });
    await append(token, { text: "it failed" });
    expect(await status(token)).toBe("failing");
    expect(await mails()).toHaveLength(0);
  });
});

describe("saving rules", () => {
  test("the record shows them with their defaults; [] and null remove them", async () => {
    const { token, id } = await setup();
    expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).rules).toEqual([]);
    const saved = await (await patch(token, id, { rules: [{ match: "x", then: "alert" }, { match: "^y$", regex: true, case_sensitive: true, then: "ok" }] })).json();
    expect(saved.rules).toEqual([
      { match: "x", regex: false, case_sensitive: false, then: "alert" },
      { match: "^y$", regex: true, case_sensitive: true, then: "ok" },
    ]);
    expect((await (await h.request("GET", "/api/v1/notes?kind=stream", { token })).json())[0].rules).toHaveLength(2);
    expect((await (await patch(token, id, { rules: [] })).json()).rules).toEqual([]);
    await patch(token, id, { rules: [{ match: "x", then: "fail" }] });
    expect((await (await patch(token, id, { rules: null })).json()).rules).toEqual([]);
  });

  test("refused with 422 naming the field: a bad regex with RE2's message, too many, a match out of range, an editable note", async () => {
    const { token, id } = await setup();
    const problem = async (note: Record<string, unknown>, on = id) => {
      const res = await patch(token, on, note);
      expect(res.status).toBe(422);
      return (await res.json()).error.details[0];
    };
    const ok = { match: "fine", then: "ok" };
    expect(await problem({ rules: [ok, ok, { match: "(a", regex: true, then: "fail" }] })).toEqual({
      field: "note.rules[2].match",
      code: "invalid_regex",
      message: "error parsing regexp: missing closing ): `(a`",
    });
    // Backreferences need backtracking: RE2 refuses them.
    expect(await problem({ rules: [{ match: "(a)\\1", regex: true, then: "fail" }] })).toMatchObject({ field: "note.rules[0].match", code: "invalid_regex" });
    expect(await problem({ rules: Array.from({ length: 21 }, () => ok) })).toMatchObject({ field: "note.rules", code: "too_many" });
    expect(await problem({ rules: [{ match: "", then: "ok" }] })).toMatchObject({ field: "note.rules[0].match", code: "out_of_range" });
    expect(await problem({ rules: [ok, { match: "é".repeat(201), then: "ok" }] })).toMatchObject({ field: "note.rules[1].match", code: "out_of_range" });
    expect(await problem({ rules: [{ match: "a\u0000b", then: "ok" }] })).toMatchObject({ field: "note.rules[0].match", code: "invalid" });
    expect(await problem({ rules: [ok, { match: "x", then: "maybe" }] })).toMatchObject({ field: "note.rules[1].then", code: "invalid" });
    const doc = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "doc" } } })).json();
    expect(await problem({ rules: [ok] }, doc.id)).toMatchObject({ field: "note.rules", code: "not_a_stream" });
    // 200 characters (not bytes) is the limit, and nothing refused was stored.
    expect((await patch(token, id, { rules: [{ match: "é".repeat(200), then: "ok" }] })).status).toBe(200);
  });

  test("(a+)+$ tried on 50,000 a's and a b finishes (RE2: linear time) and does not match", async () => {
    // JavaScript's own RegExp backtracks on this pattern: /(a+)+$/.test("a".repeat(50_000) + "b")
    // tries exponentially many ways to split the a's and would hold the event loop for good.
    const { token } = await setup([{ match: "(a+)+$", regex: true, then: "fail" }]);
    const res = await append(token, { text: `${"a".repeat(50_000)}b` });
    expect(res.status).toBe(200);
    expect(await status(token)).toBe("off");
    await append(token, { text: "xaaa" });
    expect(await status(token)).toBe("failing");
  }, 60_000);
});
