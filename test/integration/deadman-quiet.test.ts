import { afterEach, describe, expect, test } from "bun:test";
import type { Deps } from "../../src/deps";
import { checkDeadlines } from "../../src/modules/deadman/service";
import { openDeps } from "../../src/runtime";
import { runTask } from "../../src/schedule";
import { outboxMails, expectFieldError } from "../helpers/outbox";
import { FakeClock, harness, onPostgres, type Harness } from "../helpers/harness";

let h: Harness;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h.close();
});

const at = (s: string) => Date.parse(s);
const MIN = 60_000;

/** A Dev account whose stream jobs.log got its one line at `writtenAt`, watched every `interval` seconds; mail goes to the outbox. */
async function stream(writtenAt: string, interval = 3600) {
  h = await harness({ clock: new FakeClock(at(writtenAt)) });
  const account = await h.account("dev", "owner@example.com");
  const token = await h.token(account);
  const res = await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "job ok" } });
  expect(res.status).toBe(201);
  const { id } = await res.json();
  expect((await patch(token, id, { expected_interval_seconds: interval })).status).toBe(200);
  return { token, id };
}

async function patch(token: string, id: string, note: Record<string, unknown>) {
  return h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } });
}

async function record(token: string, id: string) {
  return (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
}

async function append(token: string, text: string, status?: string) {
  const res = await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: status ? { text, status } : { text } });
  expect(res.status).toBe(200);
}

/** What the scheduler does every 2 s, then the mail job. */
async function tick() {
  await runTask(h.deps, "deadman");
  await h.jobs.drain();
}

const outbox = () => outboxMails(h.dataDir);

const subjects = () => outbox().map((m) => /^Subject: (.*)$/m.exec(m)?.[1]);


describe("pause", () => {
  test("a paused stream sends no alert past its deadline; the next write resumes watching from it", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    const res = await h.request("POST", `/api/v1/notes/${id}/pause`, { token });
    expect(res.status).toBe(200);
    // Paused, it goes late at no time: due_at says so.
    expect(await res.json()).toMatchObject({ id, deadman_status: "paused", due_at: null });
    h.clock.t = at("2026-11-27T14:00:00Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "paused", due_at: null });

    await append(token, "back at work");
    await h.jobs.drain();
    // Resumed without a recovery notice: nothing was alerted.
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "ok", due_at: "2026-11-27T15:00:00.000Z" });
    h.clock.t = at("2026-11-27T14:59:59Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    h.clock.t = at("2026-11-27T15:00:00Z");
    await tick();
    expect(subjects()).toEqual(["[notestream] jobs.log has gone quiet"]);
  });

  test("pausing a note that is not a stream is refused naming it; an unknown note is 404", async () => {
    const { token } = await stream("2026-11-27T10:00:00Z");
    const created = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "plain" } } });
    const { id } = await created.json();
    await expectFieldError((await h.request("POST", `/api/v1/notes/${id}/pause`, { token })) as never, "id", "not_a_stream");
    expect((await h.request("POST", "/api/v1/notes/not_a_note/pause", { token })).status).toBe(404);
  });
});

describe("quiet_until", () => {
  test("no alert inside quiet time; one when it ends if the stream is still late, and none again", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    const res = await patch(token, id, { quiet_until: "2026-11-27T12:00:00Z" });
    expect(await res.json()).toMatchObject({ quiet_until: "2026-11-27T12:00:00.000Z" });
    h.clock.t = at("2026-11-27T11:00:00Z");
    await tick();
    h.clock.t = at("2026-11-27T11:59:59Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "late" });
    h.clock.t = at("2026-11-27T12:00:00Z");
    await tick();
    h.clock.advance(MIN);
    await tick();
    expect(subjects()).toEqual(["[notestream] jobs.log has gone quiet"]);
    expect(await record(token, id)).toMatchObject({ quiet_until: null });
  });

  test("a write inside quiet time ends the spell: no alert when it ends, and no recovery notice", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    await patch(token, id, { quiet_until: "2026-11-27T12:00:00Z" });
    h.clock.t = at("2026-11-27T11:00:00Z");
    await tick();
    h.clock.t = at("2026-11-27T11:30:00Z");
    await append(token, "late but here");
    h.clock.t = at("2026-11-27T12:00:00Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "ok", due_at: "2026-11-27T12:30:00.000Z" });
  });

  test("a failure signalled inside quiet time alerts when it ends, if nothing reported ok meanwhile", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    await patch(token, id, { quiet_until: "2026-11-27T10:30:00Z" });
    await append(token, "rc=1 FAILED", "fail");
    await h.jobs.drain();
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "failing" });
    h.clock.t = at("2026-11-27T10:30:00Z");
    await tick();
    await tick();
    const mails = outbox();
    expect(subjects()).toEqual(["[notestream] jobs.log reported a failure"]);
    expect(mails[0]).toContain("  rc=3D1 FAILED\n");
    // The alert went out, so the recovery is told.
    await append(token, "fixed", "ok");
    await h.jobs.drain();
    expect(subjects()).toEqual(["[notestream] jobs.log reported a failure", "[notestream] jobs.log is writing again"]);
  });

  test("quiet_until is at most 30 days ahead and an ISO time; a past time clears it", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    await expectFieldError(await patch(token, id, { quiet_until: "2026-12-27T10:00:01Z" }), "note.quiet_until", "out_of_range");
    await expectFieldError(await patch(token, id, { quiet_until: "tomorrow" }), "note.quiet_until", "invalid");
    expect(await (await patch(token, id, { quiet_until: "2026-12-27T10:00:00Z" })).json()).toMatchObject({ quiet_until: "2026-12-27T10:00:00.000Z" });
    expect(await (await patch(token, id, { quiet_until: "2026-11-27T09:00:00Z" })).json()).toMatchObject({ quiet_until: null });
  });
});

describe("maintenance windows", () => {
  // Sundays 02:00-04:00 Europe/Berlin: 2026-11-29 01:00-03:00 UTC (CET).
  const sundays = [{ schedule: "0 2 * * 0", timezone: "Europe/Berlin", duration_seconds: 7200 }];

  test("a spell starting inside a window alerts once, when the window ends", async () => {
    const { token, id } = await stream("2026-11-29T00:30:00Z");
    expect(await (await patch(token, id, { maintenance: sundays })).json()).toMatchObject({ maintenance: sundays });
    h.clock.t = at("2026-11-29T01:30:00Z");
    await tick();
    h.clock.t = at("2026-11-29T02:59:59Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    h.clock.t = at("2026-11-29T03:00:00Z");
    await tick();
    h.clock.advance(MIN);
    await tick();
    expect(subjects()).toEqual(["[notestream] jobs.log has gone quiet"]);
  });

  test("a spell that ends inside its window sends nothing", async () => {
    const { token, id } = await stream("2026-11-28T23:30:00Z", 7200);
    await patch(token, id, { maintenance: sundays });
    h.clock.t = at("2026-11-29T01:30:00Z");
    await tick();
    h.clock.t = at("2026-11-29T02:00:00Z");
    await append(token, "maintenance over");
    h.clock.t = at("2026-11-29T03:00:00Z");
    await tick();
    expect(outbox()).toHaveLength(0);
    expect(await record(token, id)).toMatchObject({ deadman_status: "ok", due_at: "2026-11-29T04:00:00.000Z" });
  });

  test("windows are checked: at most 10, a cron expression, a zone, a duration above nought", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    await expectFieldError(await patch(token, id, { maintenance: Array.from({ length: 11 }, () => sundays[0]) }), "note.maintenance", "too_many");
    await expectFieldError(await patch(token, id, { maintenance: [{ schedule: "every sunday", duration_seconds: 60 }] }), "note.maintenance[0].schedule", "invalid");
    await expectFieldError(await patch(token, id, { maintenance: [{ ...sundays[0], timezone: "Mars/Olympus" }] }), "note.maintenance[0].timezone", "unknown_zone");
    await expectFieldError(await patch(token, id, { maintenance: [sundays[0], { ...sundays[0], duration_seconds: 0 }] }), "note.maintenance[1].duration_seconds", "out_of_range");
    expect(await (await patch(token, id, { maintenance: [{ schedule: "0 2 * * 0", duration_seconds: 60 }] })).json()).toMatchObject({
      maintenance: [{ schedule: "0 2 * * 0", timezone: "UTC", duration_seconds: 60 }],
    });
    expect(await (await patch(token, id, { maintenance: null })).json()).toMatchObject({ maintenance: [] });
  });
});

describe("the OpenAPI document", () => {
  test("serves the pause route and the quiet fields of a note", async () => {
    await stream("2026-11-27T10:00:00Z");
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    expect(doc.paths["/api/v1/notes/{id}/pause"].post.responses["200"]).toBeDefined();
    const note = doc.components.schemas.Note.properties;
    expect(Object.keys(note)).toEqual(expect.arrayContaining(["quiet_until", "maintenance"]));
    expect(JSON.stringify(note.deadman_status)).toContain("paused");
    expect(Object.keys(doc.components.schemas.NoteUpdateRequest.properties.note.properties)).toEqual(expect.arrayContaining(["quiet_until", "maintenance"]));
  });
});

describe.skipIf(!onPostgres)("two instances on one PostgreSQL", () => {
  test("the alert held back by quiet time goes out once when both sweep at its end", async () => {
    const { token, id } = await stream("2026-11-27T10:00:00Z");
    await patch(token, id, { quiet_until: "2026-11-27T12:00:00Z" });
    h.clock.t = at("2026-11-27T11:00:00Z");
    await tick();
    const second: Deps = await openDeps(h.deps.config, h.clock);
    cleanups.push(() => second.close());
    h.clock.t = at("2026-11-27T12:00:00Z");
    // Straight to the sweeps, not through the scheduler's once-across-instances lock.
    await Promise.all([checkDeadlines(h.deps), checkDeadlines(second), checkDeadlines(h.deps), checkDeadlines(second)]);
    await h.jobs.drain();
    expect(subjects()).toEqual(["[notestream] jobs.log has gone quiet"]);
  });
});
