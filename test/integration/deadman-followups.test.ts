import { afterEach, describe, expect, test } from "bun:test";
import type { Deps } from "../../src/deps";
import { checkDeadlines } from "../../src/modules/deadman/service";
import { openDeps } from "../../src/runtime";
import { runTask } from "../../src/schedule";
import { errorOf, FakeClock, harness, onPostgres, type Harness } from "../helpers/harness";
import { expectFieldError, outboxMails } from "../helpers/outbox";

let h: Harness;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h.close();
});

const at = (s: string) => Date.parse(s);
const MIN = 60_000;

/** A Dev account's stream jobs.log, written at 10:00 and watched hourly, so late at 11:00; `follow` sets repeats and escalation. */
async function stream(follow: Record<string, unknown>) {
  h = await harness({ clock: new FakeClock(at("2026-11-27T10:00:00Z")) });
  const account = await h.account("dev", "owner@example.com");
  const token = await h.token(account);
  const res = await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: { text: "job ok" } });
  const { id } = await res.json();
  const patched = await patch(token, id, { expected_interval_seconds: 3600, ...follow });
  expect(patched.status).toBe(200);
  return { token, id };
}

const patch = (token: string, id: string, note: Record<string, unknown>) => h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } });
const record = async (token: string, id: string) => (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();

async function append(token: string, text: string, status?: string) {
  const res = await h.request("POST", "/api/v1/notes/by-filename/jobs.log/append", { token, body: status ? { text, status } : { text } });
  expect(res.status).toBe(200);
}

/** The scheduler's dead-man sweep at this time, then the mail job. */
async function tickAt(time: number | string) {
  h.clock.t = typeof time === "string" ? at(time) : time;
  await runTask(h.deps, "deadman");
  await h.jobs.drain();
}

const outbox = () => outboxMails(h.dataDir);
const subjects = () => outbox().map((m) => /^Subject: (.*)$/m.exec(m)?.[1]);
const recipients = () => outbox().map((m) => /^To: (.*)$/m.exec(m)?.[1]);
/** The acknowledge link of the n-th mail, as a path. */
const ackPath = (n: number) => new URL(/Acknowledge[^:]*: (\S+)/.exec(outbox()[n]!)![1]!).pathname;

describe("repeats", () => {
  test("a late stream's alert repeats every repeat_alert_seconds, saying for how long, and stops at 24", async () => {
    await stream({ repeat_alert_seconds: 600 });
    await tickAt("2026-11-27T11:00:00Z");
    expect(subjects()).toEqual(["[notestream] jobs.log has gone quiet"]);
    await tickAt("2026-11-27T11:09:59Z");
    expect(outbox()).toHaveLength(1);
    await tickAt("2026-11-27T11:10:00Z");
    expect(subjects()[1]).toBe("[notestream] jobs.log is still late (10 minutes)");
    expect(outbox()[1]).toContain("This is reminder 1 of at most 24");
    for (let i = 2; i <= 30; i++) await tickAt(at("2026-11-27T11:00:00Z") + i * 10 * MIN);
    expect(outbox()).toHaveLength(25);
    expect(outbox()[24]).toContain("This is the last reminder (24)");
    expect(subjects()[24]).toBe("[notestream] jobs.log is still late (4 hours)");
  });

  test("a write ends the spell: no more repeats, and the next spell repeats afresh", async () => {
    const { token } = await stream({ repeat_alert_seconds: 600 });
    await tickAt("2026-11-27T11:00:00Z");
    await tickAt("2026-11-27T11:10:00Z");
    await append(token, "back");
    await h.jobs.drain();
    expect(subjects()).toEqual(["[notestream] jobs.log has gone quiet", "[notestream] jobs.log is still late (10 minutes)", "[notestream] jobs.log is writing again"]);
    await tickAt("2026-11-27T11:20:00Z");
    expect(outbox()).toHaveLength(3);
    await tickAt("2026-11-27T12:10:00Z");
    await tickAt("2026-11-27T12:20:00Z");
    expect(subjects().slice(3)).toEqual(["[notestream] jobs.log has gone quiet", "[notestream] jobs.log is still late (10 minutes)"]);
  });

  test("a failing stream repeats too; a repeat due inside quiet time waits for its end", async () => {
    const { token, id } = await stream({ repeat_alert_seconds: 600 });
    await append(token, "rc=1", "fail");
    await h.jobs.drain();
    expect(subjects()).toEqual(["[notestream] jobs.log reported a failure"]);
    expect((await patch(token, id, { quiet_until: "2026-11-27T10:30:00Z" })).status).toBe(200);
    await tickAt("2026-11-27T10:10:00Z");
    await tickAt("2026-11-27T10:20:00Z");
    expect(outbox()).toHaveLength(1);
    await tickAt("2026-11-27T10:30:00Z");
    expect(subjects()[1]).toBe("[notestream] jobs.log is still failing (30 minutes)");
    await tickAt("2026-11-27T10:39:59Z");
    expect(outbox()).toHaveLength(2);
  });

  test("repeat_alert_seconds below the minimum interval is refused naming the field", async () => {
    const { token, id } = await stream({});
    await expectFieldError(await patch(token, id, { repeat_alert_seconds: 30 }), "note.repeat_alert_seconds", "out_of_range");
    expect(await (await patch(token, id, { repeat_alert_seconds: 600 })).json()).toMatchObject({ repeat_alert_seconds: 600 });
  });
});

describe("escalation", () => {
  test("an unacknowledged spell alerts escalate_to once, escalate_after_seconds after it began", async () => {
    await stream({ escalate_after_seconds: 3600, escalate_to: "Boss@Example.com" });
    await tickAt("2026-11-27T11:00:00Z");
    await tickAt("2026-11-27T11:59:59Z");
    expect(outbox()).toHaveLength(1);
    await tickAt("2026-11-27T12:00:00Z");
    expect(subjects()[1]).toBe("[notestream] escalated: jobs.log has been late for 60 minutes");
    expect(recipients()).toEqual(["owner@example.com", "boss@example.com"]);
    await tickAt("2026-11-27T13:00:00Z");
    await tickAt("2026-11-28T13:00:00Z");
    expect(outbox()).toHaveLength(2);
  });

  test("escalation needs both its delay and its address", async () => {
    const { token, id } = await stream({});
    await expectFieldError(await patch(token, id, { escalate_after_seconds: 3600 }), "note.escalate_to", "required");
    await expectFieldError(await patch(token, id, { escalate_to: "boss@example.com" }), "note.escalate_after_seconds", "required");
    await expectFieldError(await patch(token, id, { escalate_to: "not an address", escalate_after_seconds: 3600 }), "note.escalate_to", "invalid");
    const ok = await patch(token, id, { escalate_to: "boss@example.com", escalate_after_seconds: 3600 });
    expect(await ok.json()).toMatchObject({ escalate_to: "boss@example.com", escalate_after_seconds: 3600 });
  });
});

describe("acknowledgement", () => {
  test("POST /notes/{id}/ack ends both repeats and escalation for the spell; the next spell starts unacknowledged", async () => {
    const { token, id } = await stream({ repeat_alert_seconds: 600, escalate_after_seconds: 1800, escalate_to: "boss@example.com" });
    await tickAt("2026-11-27T11:00:00Z");
    await tickAt("2026-11-27T11:10:00Z");
    const res = await h.request("POST", `/api/v1/notes/${id}/ack`, { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ deadman_status: "late", acknowledged_at: "2026-11-27T11:10:00.000Z" });
    // Acknowledging again keeps the first time.
    h.clock.t = at("2026-11-27T11:15:00Z");
    expect(await (await h.request("POST", `/api/v1/notes/${id}/ack`, { token })).json()).toMatchObject({ acknowledged_at: "2026-11-27T11:10:00.000Z" });
    for (let m = 20; m <= 120; m += 10) await tickAt(at("2026-11-27T11:00:00Z") + m * MIN);
    expect(outbox()).toHaveLength(2);

    await append(token, "back");
    expect(await record(token, id)).toMatchObject({ deadman_status: "ok", acknowledged_at: null });
    await tickAt("2026-11-27T14:00:00Z");
    await tickAt("2026-11-27T14:10:00Z");
    expect(subjects().slice(-2)).toEqual(["[notestream] jobs.log has gone quiet", "[notestream] jobs.log is still late (10 minutes)"]);
  });

  test("acknowledging a stream that is not late or failing is 409; an editable note is 422", async () => {
    const { token, id } = await stream({});
    const res = await h.request("POST", `/api/v1/notes/${id}/ack`, { token });
    expect(res.status).toBe(409);
    expect((await errorOf(res as never)).code).toBe("conflict");
    const note = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "plain" } } })).json();
    await expectFieldError(await h.request("POST", `/api/v1/notes/${note.id}/ack`, { token }), "id", "not_a_stream");
  });

  test("every alert mail has its own link: a GET shows one button and changes nothing, its POST acknowledges", async () => {
    const { token, id } = await stream({ repeat_alert_seconds: 600, escalate_after_seconds: 1800, escalate_to: "boss@example.com" });
    await tickAt("2026-11-27T11:00:00Z");
    await tickAt("2026-11-27T11:10:00Z");
    const first = ackPath(0);
    expect(first).toMatch(/^\/ack\/ack_[A-Za-z0-9]{32}$/);
    expect(ackPath(1)).not.toBe(first);

    // Mail scanners and link previews fetch the link: that acknowledges nothing.
    for (let i = 0; i < 3; i++) {
      const page = await h.request("GET", first);
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).toContain("jobs.log");
      const card = /<div class="card">[\s\S]*<\/div>/.exec(text)![0];
      expect(card.match(/<button/g)).toHaveLength(1);
      expect(card).toContain(`<form method="post" action="${first}">`);
    }
    expect(await record(token, id)).toMatchObject({ acknowledged_at: null });

    const posted = await h.request("POST", first);
    expect(posted.status).toBe(200);
    expect(await posted.text()).toContain("Acknowledged");
    expect(await record(token, id)).toMatchObject({ acknowledged_at: "2026-11-27T11:10:00.000Z" });
    expect(await (await h.request("GET", ackPath(1))).text()).toContain("was acknowledged");
    await tickAt("2026-11-27T11:40:00Z");
    expect(outbox()).toHaveLength(2);

    // The spell ended: its links acknowledge nothing of the next one.
    await append(token, "back");
    await tickAt("2026-11-27T13:10:00Z");
    expect((await record(token, id)).deadman_status).toBe("late");
    const stale = await h.request("POST", first);
    expect(await stale.text()).toContain("has ended");
    expect(await record(token, id)).toMatchObject({ acknowledged_at: null });
    expect((await h.request("GET", "/ack/ack_unknown0000000000000000000000000")).status).toBe(404);
  });

  test("a form posted to the link from another site is refused", async () => {
    await stream({});
    await tickAt("2026-11-27T11:00:00Z");
    const res = await h.request("POST", ackPath(0), { headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(403);
  });
});

describe("the OpenAPI document", () => {
  test("serves the ack route and the follow-up fields of a note", async () => {
    await stream({});
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    expect(doc.paths["/api/v1/notes/{id}/ack"].post.responses["200"]).toBeDefined();
    const fields = ["repeat_alert_seconds", "escalate_after_seconds", "escalate_to"];
    expect(Object.keys(doc.components.schemas.Note.properties)).toEqual(expect.arrayContaining([...fields, "acknowledged_at"]));
    expect(Object.keys(doc.components.schemas.NoteUpdateRequest.properties.note.properties)).toEqual(expect.arrayContaining(fields));
  });
});

describe.skipIf(!onPostgres)("two instances on one PostgreSQL", () => {
  test("each repeat and the escalation go out once when both sweep at once", async () => {
    await stream({ repeat_alert_seconds: 600, escalate_after_seconds: 600, escalate_to: "boss@example.com" });
    await tickAt("2026-11-27T11:00:00Z");
    const second: Deps = await openDeps(h.deps.config, h.clock);
    cleanups.push(() => second.close());
    h.clock.t = at("2026-11-27T11:10:00Z");
    // Straight to the sweeps, not through the scheduler's once-across-instances lock.
    await Promise.all([checkDeadlines(h.deps), checkDeadlines(second), checkDeadlines(h.deps), checkDeadlines(second)]);
    await h.jobs.drain();
    expect(subjects().sort()).toEqual(["[notestream] escalated: jobs.log has been late for 10 minutes", "[notestream] jobs.log has gone quiet", "[notestream] jobs.log is still late (10 minutes)"]);
  });
});
