import { afterEach, describe, expect, test } from "bun:test";
import { notes } from "../../src/db/tables";
import { newNoteRow } from "../../src/modules/notes/repo";
import { runTask } from "../../src/schedule";
import { outboxMails, expectFieldError } from "../helpers/outbox";
import { FakeClock, harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(async () => {
  await h.close();
});

const at = (s: string) => Date.parse(s);

/** A Dev account whose stream backups.log got its one line at `writtenAt`; mail goes to the data dir's outbox. */
async function stream(writtenAt: string) {
  h = await harness({ clock: new FakeClock(at(writtenAt)) });
  const account = await h.account("dev", "owner@example.com");
  const token = await h.token(account);
  const res = await h.request("POST", "/api/v1/notes/by-filename/backups.log/append", { token, body: { text: "backup ok" } });
  expect(res.status).toBe(201);
  const { id } = await res.json();
  return { token, id, workspaceId: account.workspaceId };
}

async function patch(token: string, id: string, note: Record<string, unknown>) {
  return h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } });
}

async function record(token: string, id: string) {
  return (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
}

async function append(token: string, text: string) {
  const res = await h.request("POST", "/api/v1/notes/by-filename/backups.log/append", { token, body: { text } });
  expect(res.status).toBe(200);
}

/** What the scheduler does every 2 s, then the mail job. */
async function tick() {
  await runTask(h.deps, "deadman");
  await h.jobs.drain();
}

const outbox = () => outboxMails(h.dataDir);


describe("cron schedules on streams", () => {
  test("a weekday 03:00 Europe/Berlin schedule is not due over the weekend, alerts once on Monday, and a write re-arms it", async () => {
    // Friday 03:10 in Berlin (CET, UTC+1).
    const { token, id } = await stream("2026-11-27T02:10:00Z");
    const res = await patch(token, id, { schedule: "0 3 * * 1-5", timezone: "Europe/Berlin" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      schedule: "0 3 * * 1-5",
      timezone: "Europe/Berlin",
      grace_seconds: 300,
      expected_interval_seconds: null,
      deadman_status: "ok",
      // Monday 03:00 Berlin, plus the default grace of 5 minutes.
      due_at: "2026-11-30T02:05:00.000Z",
    });
    h.clock.t = at("2026-11-29T23:00:00Z");
    await tick();
    h.clock.t = at("2026-11-30T02:04:59Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    h.clock.t = at("2026-11-30T02:05:00Z");
    await tick();
    h.clock.advance(60_000);
    await tick();
    const mails = outbox();
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatch(/^Subject: \[notestream\] backups.log has gone quiet$/m);
    expect(mails[0]).toContain('expected on the schedule "0 3 * * 1-5" in Europe/Berlin');
    expect(await record(token, id)).toMatchObject({ deadman_status: "late" });

    await append(token, "backup ran late");
    expect(await record(token, id)).toMatchObject({ deadman_status: "ok", due_at: "2026-12-01T02:05:00.000Z" });
    await h.jobs.drain();
    expect(outbox().filter((m) => /writing again/.test(m))).toHaveLength(1);
    h.clock.t = at("2026-12-01T02:04:00Z");
    await tick();
    expect(outbox()).toHaveLength(2);
  });

  test("spring forward: a 02:30 Europe/Berlin schedule is due at 03:00 CEST on the last Sunday of March, not a day later", async () => {
    const { token, id } = await stream("2026-03-28T12:00:00Z");
    const res = await patch(token, id, { schedule: "30 2 * * *", timezone: "Europe/Berlin", grace_seconds: 60 });
    // 02:30 does not exist that night: clocks jump from 02:00 CET to 03:00 CEST (01:00 UTC).
    expect(await res.json()).toMatchObject({ due_at: "2026-03-29T01:01:00.000Z", grace_seconds: 60 });
    h.clock.t = at("2026-03-29T01:00:30Z");
    await append(token, "ran after the jump");
    // The next day 02:30 is CEST (UTC+2).
    expect(await record(token, id)).toMatchObject({ due_at: "2026-03-30T00:31:00.000Z" });
  });

  test("fall back: a 02:30 Europe/Berlin schedule fires once on the last Sunday of October, at the first 02:30", async () => {
    const { token, id } = await stream("2026-10-24T12:00:00Z");
    const res = await patch(token, id, { schedule: "30 2 * * *", timezone: "Europe/Berlin", grace_seconds: 60 });
    // 02:30 CEST, the first of the two 02:30s (00:30 UTC; the second is 02:30 CET, 01:30 UTC).
    expect(await res.json()).toMatchObject({ due_at: "2026-10-25T00:31:00.000Z" });
    h.clock.t = at("2026-10-25T00:30:30Z");
    await append(token, "ran at the first 02:30");
    // Not due at the repeated 02:30 an hour later: the next is Monday 02:30 CET.
    expect(await record(token, id)).toMatchObject({ due_at: "2026-10-26T01:31:00.000Z" });
    h.clock.t = at("2026-10-25T01:40:00Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "ok" });
  });

  test("a schedule in a zone far from UTC falls on the other side of midnight: Asia/Kolkata and Pacific/Auckland", async () => {
    // 15:30 in Kolkata (UTC+05:30); 00:15 there is 18:45 UTC the day before.
    const { token, id } = await stream("2026-11-22T10:00:00Z");
    const kolkata = await patch(token, id, { schedule: "15 0 * * *", timezone: "Asia/Kolkata", grace_seconds: 60 });
    expect(await kolkata.json()).toMatchObject({ due_at: "2026-11-22T18:46:00.000Z" });
    h.clock.t = at("2026-11-22T19:00:00Z");
    await append(token, "ran at 00:30 IST on the 23rd");
    expect(await record(token, id)).toMatchObject({ due_at: "2026-11-23T18:46:00.000Z" });
    // 08:00 on the 23rd in Auckland (NZDT, UTC+13); its midnight is 11:00 UTC the day before.
    const auckland = await patch(token, id, { schedule: "0 0 * * *", timezone: "Pacific/Auckland" });
    expect(await auckland.json()).toMatchObject({ timezone: "Pacific/Auckland", grace_seconds: 60, due_at: "2026-11-23T11:01:00.000Z" });
  });

  test("a bad expression, an unknown zone, a schedule faster than the shortest interval, or a grace under 1 second is 422 naming the field", async () => {
    const { token, id } = await stream("2026-11-22T10:00:00Z");
    await expectFieldError(await patch(token, id, { schedule: "every day at 3" }), "note.schedule", "invalid");
    await expectFieldError(await patch(token, id, { schedule: "0 3 * *" }), "note.schedule", "invalid");
    await expectFieldError(await patch(token, id, { schedule: "0 0 3 * * * 2027" }), "note.schedule", "invalid");
    await expectFieldError(await patch(token, id, { schedule: "0 61 * * *" }), "note.schedule", "invalid");
    await expectFieldError(await patch(token, id, { schedule: "0 0 31 2 *" }), "note.schedule", "never");
    // Every 30 seconds (6 fields, seconds first) is under the 60 s minimum of expected_interval_seconds.
    await expectFieldError(await patch(token, id, { schedule: "*/30 * * * * *" }), "note.schedule", "too_frequent");
    await expectFieldError(await patch(token, id, { schedule: "0 3 * * *", timezone: "Mars/Olympus_Mons" }), "note.timezone", "unknown_zone");
    await expectFieldError(await patch(token, id, { schedule: "0 3 * * *", timezone: "" }), "note.timezone", "unknown_zone");
    await expectFieldError(await patch(token, id, { schedule: "0 3 * * *", grace_seconds: 0 }), "note.grace_seconds", "out_of_range");
    // Once a minute is the minimum, and allowed; the zone's name comes back canonical.
    const ok = await patch(token, id, { schedule: "* * * * *", timezone: "utc" });
    expect(await ok.json()).toMatchObject({ schedule: "* * * * *", timezone: "UTC", due_at: "2026-11-22T10:06:00.000Z" });
  });

  test("a stream has an interval or a schedule: setting one clears the other, and one PATCH setting both is 422", async () => {
    const { token, id } = await stream("2026-11-22T10:00:00Z");
    expect(await (await patch(token, id, { expected_interval_seconds: 3600 })).json()).toMatchObject({
      expected_interval_seconds: 3600,
      schedule: null,
      due_at: "2026-11-22T11:00:00.000Z",
    });
    expect(await (await patch(token, id, { schedule: "0 12 * * *" })).json()).toMatchObject({
      expected_interval_seconds: null,
      schedule: "0 12 * * *",
      due_at: "2026-11-22T12:05:00.000Z",
    });
    await expectFieldError(await patch(token, id, { schedule: "0 13 * * *", expected_interval_seconds: 600 }), "note.schedule", "conflict");
    expect(await (await patch(token, id, { expected_interval_seconds: 600, schedule: null })).json()).toMatchObject({
      expected_interval_seconds: 600,
      schedule: null,
      due_at: "2026-11-22T10:10:00.000Z",
    });
    expect(await (await patch(token, id, { expected_interval_seconds: null, schedule: "0 13 * * *" })).json()).toMatchObject({
      expected_interval_seconds: null,
      schedule: "0 13 * * *",
      due_at: "2026-11-22T13:05:00.000Z",
    });
    expect(await (await patch(token, id, { schedule: null })).json()).toMatchObject({
      expected_interval_seconds: null,
      schedule: null,
      deadman_status: "off",
      due_at: null,
    });
  });

  test("a schedule set on a stream that was never written to waits for its first write", async () => {
    const { token, workspaceId } = await stream("2026-11-22T10:00:00Z");
    const empty = newNoteRow({ workspaceId, kind: "stream", filename: "nightly.log", title: "nightly.log" }, h.clock.now());
    await h.deps.writer.write(() => h.deps.db.insert(notes).values(empty));
    const res = await patch(token, empty.id, { schedule: "0 3 * * *" });
    expect(await res.json()).toMatchObject({ schedule: "0 3 * * *", deadman_status: "ok", due_at: null });
    h.clock.advance(3 * 24 * 3600_000);
    await tick();
    expect(outbox()).toHaveLength(0);
    await h.request("POST", "/api/v1/notes/by-filename/nightly.log/append", { token, body: { text: "first run" } });
    expect(await record(token, empty.id)).toMatchObject({ due_at: "2026-11-26T03:05:00.000Z" });
  });

  test("a scheduled stream restored from the trash counts from its restore", async () => {
    const { token, id } = await stream("2026-11-22T10:00:00Z");
    await patch(token, id, { schedule: "0 3 * * *" });
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    h.clock.t = at("2026-11-25T12:00:00Z");
    const restored = await h.request("POST", `/api/v1/notes/${id}/restore`, { token });
    expect(await restored.json()).toMatchObject({ deadman_status: "ok", due_at: "2026-11-26T03:05:00.000Z" });
  });
});
