import { afterEach, describe, expect, test } from "bun:test";
import { JobRunner } from "../../src/jobs/runner";
import { jobHandlers } from "../../src/queues";
import { openDeps } from "../../src/runtime";
import { buildHandler } from "../../src/app";
import { FakeClock, harness, onPostgres, type Harness } from "../helpers/harness";
import { receiver, type Received } from "../helpers/receiver";

let h: Harness;
let r: ReturnType<typeof receiver>;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h.close();
  r?.stop();
});

const PO_USER = "u".repeat(29) + "1";
const PO_APP = "a".repeat(29) + "2";

/** A Dev account whose stream app.log sends its lines to one channel at a loopback receiver. */
async function setup(channelUrl: (host: string) => string, entry: Record<string, unknown> = {}) {
  r = receiver();
  h = await harness({
    env: { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8", NOTESTREAM_WEBHOOK_TIMEOUT_MS: "1000", NOTESTREAM_PUSHOVER_API_URL: r.url },
    clock: new FakeClock(Date.parse("2026-11-27T10:00:00Z")),
  });
  const token = await h.token(await h.account("dev", "owner@example.com"));
  const channel = await (await h.request("POST", "/api/v1/channels", { token, body: { channel: { name: "c", url: channelUrl(r.url.replace("http://", "")) } } })).json();
  await append(token, "written before the subscription");
  const note = await (await h.request("GET", "/api/v1/notes?limit=1", { token })).json();
  const res = await h.request("PATCH", `/api/v1/notes/${note[0].id}`, { token, body: { note: { notify: [{ channel_id: channel.id, events: ["lines"], ...entry }] } } });
  expect(res.status).toBe(200);
  expect((await res.json()).notify).toEqual([{ channel_id: channel.id, events: ["lines"], batch_seconds: null, ...entry }]);
  return { token, channelId: channel.id as string, noteId: note[0].id as string };
}

async function append(token: string, text: string) {
  const res = await h.request("POST", "/api/v1/notes/by-filename/app.log/append", { token, body: { text } });
  expect(res.status).toBeLessThan(300);
}

const messages = () => r.received.map((q: Received) => JSON.parse(q.body).message as string);

describe("lines to a channel", () => {
  test("one message per append, in order; lines written before the subscription are not sent", async () => {
    const { token } = await setup((host) => `ntfy://${host}/app`);
    for (const text of ["first", "second\nand its second line", "third"]) {
      await append(token, text);
      await h.jobs.drain();
    }
    expect(messages()).toEqual(["first", "second\nand its second line", "third"]);
    expect(JSON.parse(r.received[0]!.body).title).toBe("app.log");
  });

  test("batch_seconds: the window's lines as one message at its end", async () => {
    const { token } = await setup((host) => `ntfy://${host}/app`, { batch_seconds: 60 });
    for (let i = 1; i <= 5; i++) {
      await append(token, `line ${i}`);
      h.clock.advance(5_000);
      await h.jobs.drain();
    }
    expect(r.received).toHaveLength(0);
    h.clock.t = Date.parse("2026-11-27T10:01:00Z");
    await h.jobs.drain();
    expect(messages()).toEqual(["line 1\nline 2\nline 3\nline 4\nline 5"]);
    await append(token, "line 6");
    h.clock.advance(60_000);
    await h.jobs.drain();
    expect(messages()).toEqual(["line 1\nline 2\nline 3\nline 4\nline 5", "line 6"]);
  });

  test("flood control: 20 messages a minute, then one gathered message every 15 s; no line twice, none out of order", async () => {
    const { token } = await setup((host) => `ntfy://${host}/app`);
    for (let i = 1; i <= 50; i++) {
      await append(token, `burst ${i}`);
      await h.jobs.drain();
    }
    expect(messages()).toEqual(Array.from({ length: 20 }, (_, i) => `burst ${i + 1}`));
    h.clock.advance(14_999);
    await h.jobs.drain();
    expect(r.received).toHaveLength(20);
    h.clock.advance(1);
    await h.jobs.drain();
    expect(messages()[20]).toBe(Array.from({ length: 30 }, (_, i) => `burst ${i + 21}`).join("\n"));
    await append(token, "after the burst");
    await h.jobs.drain();
    h.clock.advance(15_000);
    await h.jobs.drain();
    expect(messages()[21]).toBe("after the burst");
    // A minute after the burst the window is clear again: one message per append.
    h.clock.advance(60_000);
    await append(token, "calm");
    await h.jobs.drain();
    expect(messages().slice(22)).toEqual(["calm"]);
  });

  test("a gathered message is cut to the platform's size, saying how many lines it left out", async () => {
    const { token } = await setup(() => `pover://${PO_USER}@${PO_APP}`, { batch_seconds: 10 });
    for (let i = 1; i <= 100; i++) await append(token, `line number ${String(i).padStart(3, "0")} with some words`);
    h.clock.advance(10_000);
    await h.jobs.drain();
    expect(r.received).toHaveLength(1);
    const text = messages()[0]!;
    expect([...text].length).toBeLessThanOrEqual(1024);
    const kept = text.split("\n").slice(0, -1);
    expect(kept[0]).toBe("line number 001 with some words");
    expect(text.split("\n").at(-1)).toBe(`… and ${100 - kept.length} more lines`);
  });
});

describe.skipIf(!onPostgres)("two instances on one PostgreSQL", () => {
  test("appends taken by both and jobs run by both deliver every line once, in order", async () => {
    const { token } = await setup((host) => `ntfy://${host}/app`);
    const second = await openDeps(h.deps.config, h.clock);
    const secondJobs = new JobRunner(second, jobHandlers);
    const secondHandle = buildHandler(second);
    cleanups.push(async () => {
      await secondJobs.stop();
      await second.close();
    });
    for (let i = 1; i <= 12; i++) {
      const res = await (i % 2 ? h.request("POST", "/api/v1/notes/by-filename/app.log/append", { token, body: { text: `line ${i}` } }) : secondHandle(new Request("http://notestream.test/api/v1/notes/by-filename/app.log/append", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ text: `line ${i}` }) }), "127.0.0.1"));
      expect(res.status).toBeLessThan(300);
      await Promise.all([h.jobs.drain(), secondJobs.drain()]);
    }
    expect(messages()).toEqual(Array.from({ length: 12 }, (_, i) => `line ${i + 1}`));
  });
});
