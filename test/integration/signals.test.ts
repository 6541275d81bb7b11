/**
 * Signals on appends (status ok, fail, start) for the dead-man's switch: a failure alerts once at
 * once, the next ok recovers, a run that starts and never reports within max_run_seconds alerts
 * like a missed deadline, and alerts reach a chat webhook when the stream asks for them.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { workspaces } from "../../src/db/tables";
import { runTask } from "../../src/schedule";
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

/** A Dev account's token; mail to a loopback SMTP server; webhooks may call loopback receivers. */
async function setup() {
  smtp = await smtpServer();
  // Real time: the receivers check signature timestamps against their own clock.
  h = await harness({ env: { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" }, clock: new FakeClock(Date.now()) });
  return { token: await h.token(await h.account("dev", "owner@example.com"), ["read", "write"]) };
}

const append = (token: string, body: unknown, query = "") =>
  h.request("POST", `/api/v1/notes/by-filename/backup.log/append${query}`, { token, body });
const note = async (token: string) => (await h.request("GET", "/api/v1/notes/by-filename/backup.log", { token })).json();
async function settle() {
  await runTask(h.deps, "deadman");
  await h.jobs.drain();
}

describe("signals", () => {
  test("fail marks the stream failing and alerts once at once, with the line and the last lines; the next ok recovers", async () => {
    const { token } = await setup();
    expect((await append(token, { text: "backup started", status: "start" })).status).toBe(201);
    h.clock.advance(42 * SEC);
    expect((await append(token, { text: "rc=1 FAILED: disk full", status: "fail" })).status).toBe(200);
    await h.jobs.drain();
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.subject).toBe("[notestream] backup.log reported a failure");
    expect(smtp!.mails[0]!.text).toContain("  rc=1 FAILED: disk full");
    expect(smtp!.mails[0]!.text).toContain("  backup started");
    expect(await note(token)).toMatchObject({ deadman_status: "failing", last_run_seconds: 42, run_started_at: null });

    // More failures and plain lines while failing: no more mail, still failing.
    await append(token, { text: "retry FAILED", status: "fail" });
    await append(token, { text: "just a log line" });
    await settle();
    expect(smtp!.mails).toHaveLength(1);
    expect((await note(token)).deadman_status).toBe("failing");

    await append(token, { text: "ok in 40s", status: "ok" });
    await h.jobs.drain();
    await smtp!.waitFor(2);
    expect(smtp!.mails[1]!.subject).toBe("[notestream] backup.log is writing again");
    expect(smtp!.mails[1]!.text).toContain("ok in 40s");
    // Never armed with an interval: back to off, not ok.
    expect((await note(token)).deadman_status).toBe("off");
  });

  test("text/plain bodies signal with ?status=; an unknown status is refused naming the field", async () => {
    const { token } = await setup();
    const plain = (q: string, text: string) =>
      h.request("POST", `/api/v1/notes/by-filename/backup.log/append${q}`, { token, body: text, headers: { "content-type": "text/plain" } });
    expect((await plain("?status=fail", "FAILED (exit 3)")).status).toBe(201);
    expect((await note(token)).deadman_status).toBe("failing");
    const bad = await plain("?status=broken", "x");
    expect(bad.status).toBe(422);
    expect((await bad.json()).error.details).toEqual([{ field: "status", code: "invalid", message: "status must be ok, fail or start" }]);
    const badJson = await append(token, { text: "x", status: "maybe" });
    expect(badJson.status).toBe(422);
    expect((await badJson.json()).error.details[0].field).toBe("status");
    // Nothing of the refused appends was written.
    expect((await note(token)).plain_body).toBe("FAILED (exit 3)\n");
  });

  test("a run that starts and never reports within max_run_seconds alerts like a missed deadline, once; the next ok recovers", async () => {
    const { token } = await setup();
    await append(token, { text: "first" });
    const { id } = await note(token);
    const patched = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { max_run_seconds: 600, expected_interval_seconds: 86_400 } } });
    expect(await patched.json()).toMatchObject({ max_run_seconds: 600, deadman_status: "ok" });
    await append(token, { text: "start: backup.sh", status: "start" });
    h.clock.advance(599 * SEC);
    await settle();
    expect(smtp!.mails).toHaveLength(0);
    h.clock.advance(2 * SEC);
    await settle();
    await smtp!.waitFor(1);
    expect(smtp!.mails[0]!.subject).toBe("[notestream] backup.log: a run has not finished");
    expect(await note(token)).toMatchObject({ deadman_status: "late", run_started_at: null });
    h.clock.advance(3600 * SEC);
    await settle();
    expect(smtp!.mails).toHaveLength(1);
    await append(token, { text: "ok in 2h", status: "ok" });
    await h.jobs.drain();
    await smtp!.waitFor(2);
    expect(smtp!.mails[1]!.subject).toBe("[notestream] backup.log is writing again");
    expect((await note(token)).deadman_status).toBe("ok");
    // A run that reports in time alerts nothing.
    await append(token, { text: "start", status: "start" });
    h.clock.advance(300 * SEC);
    await append(token, { text: "ok in 300s", status: "ok" });
    h.clock.advance(3600 * SEC);
    await settle();
    expect(smtp!.mails).toHaveLength(2);
    expect((await note(token)).last_run_seconds).toBe(300);
  });

  test("with alert_webhook, failures, recoveries and silence also reach the stream's chat webhook in its format", async () => {
    const { token } = await setup();
    hook = receiver();
    await append(token, { text: "first" });
    const { id } = await note(token);
    const patched = await h.request("PATCH", `/api/v1/notes/${id}`, {
      token,
      body: { note: { webhook_url: `${hook.url}/slack`, webhook_format: "slack", alert_webhook: true, expected_interval_seconds: 3600 } },
    });
    expect(await patched.json()).toMatchObject({ alert_webhook: true });
    await append(token, { text: "nightly FAILED (exit 2)", status: "fail" });
    await h.jobs.drain();
    // The line itself, then the alert, in order.
    await hook.waitFor(2);
    expect(JSON.parse(hook.received[0]!.body)).toEqual({ text: "[backup.log] nightly FAILED (exit 2)" });
    expect(JSON.parse(hook.received[1]!.body)).toEqual({ text: "[backup.log] FAILED: backup.log reported a failure: nightly FAILED (exit 2)" });
    await append(token, { text: "ok", status: "ok" });
    await h.jobs.drain();
    await hook.waitFor(4);
    expect(JSON.parse(hook.received[3]!.body).text).toBe("[backup.log] RECOVERED: backup.log reported ok: ok");
    h.clock.advance(3601 * SEC);
    await settle();
    await hook.waitFor(5);
    expect(JSON.parse(hook.received[4]!.body).text).toStartWith("[backup.log] LATE: no write to backup.log for 3601s");
    // And in the generic format, an alert is its own event type.
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_format: "generic" } } });
    await append(token, { text: "broken again", status: "fail" });
    await h.jobs.drain();
    await hook.waitFor(7);
    expect(JSON.parse(hook.received[6]!.body)).toMatchObject({ type: "note.alert", data: { text: "FAILED: backup.log reported a failure: broken again" } });
  });

  test("max_run_seconds and alert_webhook are dead-man settings: refused on plans without the switch; out-of-range refused", async () => {
    const { token } = await setup();
    await append(token, { text: "x" });
    const { id } = await note(token);
    const bad = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { max_run_seconds: 0 } } });
    expect(bad.status).toBe(422);
    expect((await bad.json()).error.details[0].field).toBe("note.max_run_seconds");
    const editable = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t" } } })).json();
    const notStream = await h.request("PATCH", `/api/v1/notes/${editable.id}`, { token, body: { note: { alert_webhook: true } } });
    expect(notStream.status).toBe(422);

    const trial = await h.account("personal", "p@example.com");
    await h.deps.writer.write(async () => {
      await h.deps.db.update(workspaces).set({ state: "trial", trialEndsAt: h.clock.now() + 86_400_000 }).where(eq(workspaces.id, trial.workspaceId));
    });
    const t2 = await h.token(trial, ["read", "write"]);
    await h.request("POST", "/api/v1/notes/by-filename/p.log/append", { token: t2, body: { text: "x" } });
    const p = await (await h.request("GET", "/api/v1/notes/by-filename/p.log", { token: t2 })).json();
    const refused = await h.request("PATCH", `/api/v1/notes/${p.id}`, { token: t2, body: { note: { max_run_seconds: 60 } } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe("plan_required");
    // The status is still kept (the board shows it), but no alert goes out on such a plan.
    await h.request("POST", "/api/v1/notes/by-filename/p.log/append", { token: t2, body: { text: "FAILED", status: "fail" } });
    await settle();
    expect((await (await h.request("GET", "/api/v1/notes/by-filename/p.log", { token: t2 })).json()).deadman_status).toBe("failing");
    expect(smtp!.mails).toHaveLength(0);
  });
});
