import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { eq } from "drizzle-orm";
import { jobs, workspaces } from "../../src/db/tables";
import { flushLog } from "../../src/http/log";
import { lapse, startTrial, subscribe } from "../../src/modules/accounts/lifecycle";
import { runTask } from "../../src/schedule";
import { FakeClock, harness, type Harness } from "../helpers/harness";
import { receiver } from "../helpers/receiver";

/**
 * The log lines of background events, read from the log's sink (stdout) as an operator would:
 * one JSON object per line, in the request lines' format, and never a secret in them.
 */
let h: Harness;
let r: ReturnType<typeof receiver> | undefined;
let written: string[] = [];
let spy: ReturnType<typeof spyOn> | undefined;

beforeEach(() => {
  flushLog();
  written = [];
  spy = spyOn(process.stdout, "write").mockImplementation(((chunk: string | Uint8Array) => {
    written.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
    return true;
  }) as typeof process.stdout.write);
});
afterEach(async () => {
  await h.close();
  r?.stop();
  r = undefined;
  flushLog();
  spy?.mockRestore();
});

type Line = Record<string, unknown> & { time: string; level: string; msg: string };

/** Every line written so far, each parsed as JSON (a line that is not JSON fails the test). */
function lines(): Line[] {
  flushLog();
  return written
    .join("")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

const withMsg = (msg: string) => lines().filter((l) => l.msg === msg);
const raw = () => (flushLog(), written.join(""));

function expectShape(line: Line, level: string) {
  expect(line.level).toBe(level);
  expect(Number.isNaN(Date.parse(line.time))).toBe(false);
  expect(Object.keys(line).slice(0, 3)).toEqual(["time", "level", "msg"]);
}

const ALLOW = { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8,::1/128", NOTESTREAM_WEBHOOK_TIMEOUT_MS: "400" };
// A Slack-style URL: the path is the credential.
const SECRET_PATH = "/services/T0000/B0000/XXXXsecretXXXXsecretXXXX";

async function streamWithWebhook(status: number) {
  h = await harness({ env: ALLOW, clock: new FakeClock(Date.now()) });
  r = receiver(() => new Response("no", { status }));
  const token = await h.token(await h.account("dev", "owner@private.example"));
  const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/hooks.log/append", { token, body: { text: "first" } })).json();
  const url = `${r.url}${SECRET_PATH}?token=querysecret`;
  const note = await (await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: url } } })).json();
  expect(note.webhook_secret).toMatch(/^whsec_/);
  await h.request("POST", "/api/v1/notes/by-filename/hooks.log/append", { token, body: { text: "the body of the append" } });
  await h.jobs.drain();
  return { token, id, secret: note.webhook_secret as string, host: `127.0.0.1:${r.port}` };
}

function expectNoSecrets(...secrets: string[]) {
  const text = raw();
  for (const s of [...secrets, SECRET_PATH, "querysecret", "the body of the append", "owner@private.example"]) expect(text).not.toContain(s);
}

describe("background events each leave one JSON log line", () => {
  test("a webhook delivery that fails and is retried: attempt, next retry, note, delivery and host only", async () => {
    const { token, id, secret, host } = await streamWithWebhook(500);
    const [line, ...more] = withMsg("webhook delivery failed, will retry");
    expect(more).toHaveLength(0);
    expectShape(line!, "warn");
    const [job] = await h.deps.db.select({ run_at: jobs.runAt, payload: jobs.payload }).from(jobs).where(eq(jobs.queue, "webhook")).limit(1);
    expect(line).toMatchObject({ note_id: id, delivery_id: JSON.parse(job!.payload).deliveryId, attempt: 1, host, error: "HTTP 500", next_attempt_at: new Date(job!.run_at).toISOString() });
    expectNoSecrets(token, secret);
  });

  test("a webhook disabled (410 Gone) says so, once, without the URL's secret path or the signing secret", async () => {
    const { token, id, secret, host } = await streamWithWebhook(410);
    expect(withMsg("webhook delivery failed, will retry")).toHaveLength(0);
    const [line, ...more] = withMsg("webhook disabled");
    expect(more).toHaveLength(0);
    expectShape(line!, "warn");
    expect(line).toMatchObject({ note_id: id, attempt: 1, host, error: "HTTP 410" });
    expectNoSecrets(token, secret);
  });

  test("an inbox payload dead-lettered: note, delivery and reason; never the inbox URL's token or the payload", async () => {
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/inbox.log/append", { token, body: { text: "first" } })).json();
    const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
    const sent = await h.request("POST", `/h/${inbox.token}`, { body: "the body of the append", headers: { "content-type": "text/plain" } });
    const { id: deliveryId } = await sent.json();
    await h.deps.db.update(workspaces).set({ state: "read_only" }).where(eq(workspaces.id, a.workspaceId));
    await h.jobs.drain();
    const [line, ...more] = withMsg("inbox payload dead-lettered");
    expect(more).toHaveLength(0);
    expectShape(line!, "warn");
    expect(line).toMatchObject({ note_id: id, delivery_id: deliveryId });
    expect(line!.reason).toContain("read-only");
    expectNoSecrets(token, inbox.token);
  });

  test("a dead-man alert sent: the note, how long it was silent, the recipient's domain only", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev", "owner@private.example"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/cron.log/append", { token, body: { text: "the body of the append" } })).json();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: 3600 } } });
    h.clock.advance(3601_000);
    await runTask(h.deps, "deadman");
    await runTask(h.deps, "deadman");
    const [line, ...more] = withMsg("dead-man alert sent");
    expect(more).toHaveLength(0);
    expectShape(line!, "warn");
    expect(line).toMatchObject({ note_id: id, interval_seconds: 3600, silent_seconds: 3601, to_domain: "private.example" });
    expectNoSecrets(token);
  });

  test("a full-stream alert sent: the note and its cap, once per spell", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    let id = "";
    // Up to the Dev plan's 3 MB a note, in 100 KB lines (an append's body cap is below that).
    for (let size = 0; size + 100 * 1024 <= 3 * 1024 * 1024; size += 100 * 1024) {
      const res = await h.request("POST", "/api/v1/notes/by-filename/full.log/append", { token, body: { text: "x".repeat(100 * 1024 - 1) } });
      id = (await res.json()).id;
    }
    for (let i = 0; i < 2; i++) {
      const refused = await h.request("POST", "/api/v1/notes/by-filename/full.log/append", { token, body: { text: "y".repeat(200 * 1024) } });
      expect(refused.status).toBe(403);
    }
    await h.settle();
    const [line, ...more] = withMsg("full-stream alert sent");
    expect(more).toHaveLength(0);
    expectShape(line!, "warn");
    expect(line).toMatchObject({ note_id: id, cap_bytes: 3 * 1024 * 1024 });
  });

  test("a mail that fails: the recipient's domain, the attempt and the next try; the address is gone from the error too", async () => {
    h = await harness();
    h.deps.mailer = {
      send: async (m) => {
        throw new Error(`550 5.1.1 <${m.to}>: Recipient address rejected`);
      },
    };
    const token = await h.token(await h.account("dev", "owner@private.example"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/cron.log/append", { token, body: { text: "first" } })).json();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: 3600 } } });
    h.clock.advance(3601_000);
    await runTask(h.deps, "deadman");
    await h.jobs.drain();
    const [line, ...more] = withMsg("mail failed, will retry");
    expect(more).toHaveLength(0);
    expectShape(line!, "warn");
    expect(line).toMatchObject({ to_domain: "private.example", attempt: 1, error: "mail not sent: 550 5.1.1 <*@private.example>: Recipient address rejected" });
    expect(Date.parse(line!.next_attempt_at as string)).toBeGreaterThan(h.clock.now());
    expectNoSecrets(token);
  });

  test("lifecycle transitions: a trial ends, its notes go to the trash, an account lapses and is reactivated", async () => {
    h = await harness();
    const a = await h.account("free");
    await h.deps.writer.write(() => startTrial(h.deps, a.workspaceId));
    const token = await h.token(a);
    // Twelve notes: the free plan keeps ten.
    for (let i = 0; i < 12; i++) await h.request("POST", `/api/v1/notes/by-filename/n${i}.log/append`, { token, body: { text: "x" } });
    h.clock.advance(15 * 86_400_000);
    await runTask(h.deps, "lifecycle");
    h.clock.advance(31 * 86_400_000);
    await runTask(h.deps, "lifecycle");
    await runTask(h.deps, "lifecycle");
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));
    await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "dev"));
    const events = lines().filter((l) => l.msg !== "request");
    expect(events.map((l) => [l.msg, l.workspace_id])).toEqual([
      ["trial ended", a.workspaceId],
      ["notes trashed after the trial", a.workspaceId],
      ["account reactivated", a.workspaceId],
      ["account lapsed", a.workspaceId],
      ["account reactivated", a.workspaceId],
    ]);
    expect(events[1]).toMatchObject({ notes: 2 });
    expect(events[2]).toMatchObject({ from: "trial_ended", plan: "dev" });
    expect(events[4]).toMatchObject({ from: "read_only", plan: "dev" });
    for (const e of events) expectShape(e, "info");
    expectNoSecrets(token);
  });

  test("a transition in a write that rolls back leaves no line", async () => {
    h = await harness();
    const a = await h.account("dev");
    await expect(
      h.deps.writer.write(async () => {
        await lapse(h.deps, a.workspaceId);
        throw new Error("something after it failed");
      }),
    ).rejects.toThrow("something after it failed");
    expect(withMsg("account lapsed")).toHaveLength(0);
  });
});

describe("the request line", () => {
  test("carries the client's address: the peer's (X-Forwarded-For means nothing without NOTESTREAM_TRUST_PROXY)", async () => {
    h = await harness({ env: { NOTESTREAM_LOG_REQUESTS: "true" } });
    const token = await h.token(await h.account("dev"));
    await h.request("POST", "/api/v1/notes/by-filename/a.log/append", { token, body: { text: "x" }, ip: "203.0.113.7" });
    await h.request("GET", "/up", { ip: "2001:db8::1", headers: { "x-forwarded-for": "198.51.100.1" } });
    const requests = withMsg("request");
    expect(requests.map((l) => [l.path, l.ip])).toEqual([
      ["/api/v1/notes/by-filename/a.log/append", "203.0.113.7"],
      ["/up", "2001:db8::1"],
    ]);
    expect(Object.keys(requests[0]!)).toEqual(["time", "level", "msg", "method", "path", "status", "duration_ms", "request_id", "ip"]);
    expect(raw()).not.toContain(token);
  });

  test("behind a trusted proxy the address is the hop it recorded", async () => {
    h = await harness({ env: { NOTESTREAM_LOG_REQUESTS: "true", NOTESTREAM_TRUST_PROXY: "1" } });
    await h.request("GET", "/up", { ip: "10.0.0.2", headers: { "x-forwarded-for": "192.0.2.50, 198.51.100.1" } });
    expect(withMsg("request").map((l) => l.ip)).toEqual(["198.51.100.1"]);
  });
});
