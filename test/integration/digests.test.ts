import { afterEach, describe, expect, test } from "bun:test";
import type { Deps } from "../../src/deps";
import { sendDueDigests } from "../../src/modules/digests/service";
import { openDeps } from "../../src/runtime";
import { runTask } from "../../src/schedule";
import { FakeClock, harness, onPostgres, type Harness } from "../helpers/harness";
import { expectFieldError, outboxMails } from "../helpers/outbox";
import { receiver } from "../helpers/receiver";

let h: Harness;
let r: ReturnType<typeof receiver> | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h.close();
  r?.stop();
  r = undefined;
});

const at = (s: string) => Date.parse(s);

/** A Dev account with three streams written at 07:00 Berlin (06:00 UTC), before a 08:00 Berlin digest is made. */
async function setup() {
  r = receiver();
  h = await harness({ env: { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" }, clock: new FakeClock(at("2026-11-27T06:00:00Z")) });
  const token = await h.token(await h.account("dev", "owner@example.com"));
  for (const f of ["deploys.log", "backup.log", "quiet.log"]) await append(token, f, "before the digest");
  return token;
}

async function append(token: string, filename: string, text: string, status?: string) {
  const res = await h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: status ? { text, status } : { text } });
  expect(res.status).toBeLessThan(300);
}

const create = (token: string, digest: Record<string, unknown>) => h.request("POST", "/api/v1/digests", { token, body: { digest } });

async function sweepAt(time: string) {
  h.clock.t = at(time);
  await runTask(h.deps, "digests");
  await h.jobs.drain();
}

describe("digests", () => {
  test("at its time, one message: per stream the lines, bytes and alerts since the last digest, its status, its last lines; quiet streams share a line", async () => {
    const token = await setup();
    const res = await create(token, { schedule: "0 8 * * *", timezone: "Europe/Berlin", email: "Team@Example.com", last_lines: 2 });
    expect(res.status).toBe(201);
    const d = await res.json();
    expect(d).toMatchObject({ schedule: "0 8 * * *", timezone: "Europe/Berlin", email: "team@example.com", channel_id: null, streams: "all", last_lines: 2, next_run_at: "2026-11-27T07:00:00.000Z", last_sent_at: null });
    h.clock.t = at("2026-11-27T06:10:00Z");
    await append(token, "deploys.log", "deploy 41 ok\ndeploy 42 ok");
    await append(token, "deploys.log", "deploy 43 started");
    await append(token, "backup.log", "rc=1", "fail");
    await sweepAt("2026-11-27T06:59:59Z");
    expect(outboxMails(h.dataDir).filter((m) => m.includes("Digest"))).toHaveLength(0);
    await sweepAt("2026-11-27T07:00:00Z");
    const mails = outboxMails(h.dataDir).filter((m) => m.includes("Subject: [notestream] Digest"));
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail).toContain("To: team@example.com");
    expect(mail).toContain("Subject: [notestream] Digest: 4 lines, 1 alert in 2 streams");
    expect(mail).toContain("Since 27 Nov 2026, 07:00 (Europe/Berlin): 2 streams of 3 wrote 4 lines");
    expect(mail).toContain("deploys.log: 3 lines, 44 B, 0 alerts; not watched now\n  deploy 42 ok\n  deploy 43 started");
    expect(mail).toContain("backup.log: 1 line, 5 B, 1 alert;");
    expect(mail).toContain("Nothing new (1): quiet.log (not watched)");
    const after = await (await h.request("GET", "/api/v1/digests", { token })).json();
    expect(after[0]).toMatchObject({ last_sent_at: "2026-11-27T07:00:00.000Z", next_run_at: "2026-11-28T07:00:00.000Z" });

    // The next one covers only what came after.
    h.clock.advance(1_000);
    await append(token, "quiet.log", "woke up");
    await sweepAt("2026-11-28T07:00:00Z");
    const second = outboxMails(h.dataDir).filter((m) => m.includes("Subject: [notestream] Digest"))[1]!;
    expect(second).toContain("1 stream of 3 wrote 1 line");
    expect(second).toContain("Nothing new (2): backup.log (failing), deploys.log (not watched)");
  });

  test("a failure and the recovery after it are one alert: a recovery notice is not counted", async () => {
    const token = await setup();
    expect((await create(token, { schedule: "0 8 * * *", timezone: "Europe/Berlin", email: "team@example.com", last_lines: 0 })).status).toBe(201);
    h.clock.t = at("2026-11-27T06:10:00Z");
    await append(token, "backup.log", "rc=1", "fail");
    h.clock.t = at("2026-11-27T06:20:00Z");
    await append(token, "backup.log", "rc=0", "ok");
    await sweepAt("2026-11-27T07:00:00Z");
    const mail = outboxMails(h.dataDir).find((m) => m.includes("Subject: [notestream] Digest"))!;
    expect(mail).toContain("Subject: [notestream] Digest: 2 lines, 1 alert in 1 stream");
    expect(mail).toContain("backup.log: 2 lines, 10 B, 1 alert;");
  });

  test("to a channel, chosen streams; send now covers what happened since and moves the next digest's start", async () => {
    const token = await setup();
    const channel = await (await h.request("POST", "/api/v1/channels", { token, body: { channel: { name: "ntfy", url: `ntfy://${r!.url.replace("http://", "")}/digest` } } })).json();
    const d = await (await create(token, { schedule: "0 18 * * 1-5", channel_id: channel.id, streams: ["deploys.log"], last_lines: 0 })).json();
    h.clock.advance(1_000);
    await append(token, "deploys.log", "one");
    await append(token, "backup.log", "not in this digest");
    const sent = await h.request("POST", `/api/v1/digests/${d.id}/send`, { token });
    expect(sent.status).toBe(202);
    expect((await sent.json()).last_sent_at).toBe("2026-11-27T06:00:01.000Z");
    await h.jobs.drain();
    expect(r!.received).toHaveLength(1);
    const body = JSON.parse(r!.received[0]!.body);
    expect(body.title).toBe("Digest: 1 line, 0 alerts in 1 stream");
    expect(body.message).toContain("1 stream of 1 wrote 1 line");
    expect(body.message).not.toContain("backup.log");
  });

  test("the checks: a schedule, a known zone, exactly one destination of this workspace, streams, last_lines", async () => {
    const token = await setup();
    await expectFieldError(await create(token, { email: "a@example.com" }), "digest.schedule", "required");
    await expectFieldError(await create(token, { schedule: "every morning", email: "a@example.com" }), "digest.schedule", "invalid");
    await expectFieldError(await create(token, { schedule: "* * * * * *", email: "a@example.com" }), "digest.schedule", "too_frequent");
    await expectFieldError(await create(token, { schedule: "0 8 * * *", timezone: "Mars/Base", email: "a@example.com" }), "digest.timezone", "unknown_zone");
    await expectFieldError(await create(token, { schedule: "0 8 * * *" }), "digest.channel_id", "required");
    await expectFieldError(await create(token, { schedule: "0 8 * * *", email: "a@example.com", channel_id: "chn_x" }), "digest.channel_id", "required");
    await expectFieldError(await create(token, { schedule: "0 8 * * *", channel_id: "chn_x" }), "digest.channel_id", "unknown_channel");
    await expectFieldError(await create(token, { schedule: "0 8 * * *", email: "nope" }), "digest.email", "invalid");
    await expectFieldError(await create(token, { schedule: "0 8 * * *", email: "a@example.com", streams: [] }), "digest.streams", "invalid");
    await expectFieldError(await create(token, { schedule: "0 8 * * *", email: "a@example.com", last_lines: 21 }), "digest.last_lines", "out_of_range");
    const d = await (await create(token, { schedule: "0 8 * * *", email: "a@example.com" })).json();
    const patched = await h.request("PATCH", `/api/v1/digests/${d.id}`, { token, body: { digest: { schedule: "30 7 * * *" } } });
    expect(await patched.json()).toMatchObject({ schedule: "30 7 * * *", email: "a@example.com", next_run_at: "2026-11-27T07:30:00.000Z" });
    // One digest reads as the list shows it; another workspace's id is 404, as is one deleted.
    const one = await h.request("GET", `/api/v1/digests/${d.id}`, { token });
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual((await (await h.request("GET", "/api/v1/digests", { token })).json())[0]);
    const other = await h.token(await h.account("dev", "other@example.com"));
    expect((await h.request("GET", `/api/v1/digests/${d.id}`, { token: other })).status).toBe(404);
    expect((await h.request("DELETE", `/api/v1/digests/${d.id}`, { token })).status).toBe(200);
    expect((await h.request("GET", "/api/v1/digests", { token })).headers.get("x-total-count")).toBe("0");
    expect((await h.request("GET", `/api/v1/digests/${d.id}`, { token })).status).toBe(404);
  });
});

describe.skipIf(!onPostgres)("two instances on one PostgreSQL", () => {
  test("a digest's run goes out once when both sweep at once", async () => {
    const token = await setup();
    await create(token, { schedule: "0 8 * * *", timezone: "Europe/Berlin", email: "team@example.com" });
    const second: Deps = await openDeps(h.deps.config, h.clock);
    cleanups.push(() => second.close());
    h.clock.t = at("2026-11-27T07:00:00Z");
    const write = (deps: Deps) => deps.writer.write(() => sendDueDigests(deps));
    const sent = await Promise.all([write(h.deps), write(second), write(h.deps), write(second)]);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(1);
  });
});
