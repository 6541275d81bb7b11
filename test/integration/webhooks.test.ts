import { afterEach, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { jobs, notes } from "../../src/db/tables";
import { errorOf, FakeClock, harness, type Harness } from "../helpers/harness";
import { receiver } from "../helpers/receiver";

let h: Harness;
let r: ReturnType<typeof receiver>;
afterEach(async () => {
  await h.close();
  r?.stop();
});

const ALLOW = { NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8,::1/128", NOTESTREAM_WEBHOOK_TIMEOUT_MS: "400" };

/** A Dev account with a stream whose webhook points at the receiver. */
async function setup(opts: { env?: Record<string, string>; format?: string; respond?: Parameters<typeof receiver>[0] } = {}) {
  // Real time: receivers verify signature timestamps against their own clock.
  h = await harness({ env: { ...ALLOW, ...opts.env }, clock: new FakeClock(Date.now()) });
  r = receiver(opts.respond);
  const token = await h.token(await h.account("dev"));
  const created = await (await h.request("POST", "/api/v1/notes/by-filename/deploys.log/append", { token, body: { text: "before the webhook" } })).json();
  const patched = await h.request("PATCH", `/api/v1/notes/${created.id}`, {
    token,
    body: { note: { webhook_url: `${r.url}/hook`, ...(opts.format ? { webhook_format: opts.format } : {}) } },
  });
  expect(patched.status).toBe(200);
  const note = await patched.json();
  return { token, note, id: created.id as string };
}

const append = (token: string, text: string) =>
  h.request("POST", "/api/v1/notes/by-filename/deploys.log/append", { token, body: { text } });

/** Runs due jobs until the queue is quiet, moving the fake clock past each retry delay. */
async function runRetries(rounds: number, stepMs = 7 * 3600_000) {
  for (let i = 0; i < rounds; i++) {
    await h.jobs.drain();
    h.clock.advance(stepMs);
  }
  await h.jobs.drain();
}

describe("outbound webhook deliveries", () => {
  test("setting a URL creates a whsec_ secret and enables the webhook", async () => {
    const { note } = await setup();
    expect(note.webhook_url).toBe(`${r.url}/hook`);
    expect(note.webhook_status).toBe("enabled");
    expect(note.webhook_format).toBe("generic");
    expect(note.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  test("each append is one signed delivery that our scheme and the standardwebhooks library both verify", async () => {
    const { token, note } = await setup();
    const res = await append(token, "deploy 4f2a1c ok");
    const appended = await res.json();
    await r.waitFor(1);
    await h.jobs.drain();
    const got = r.received[0]!;
    expect(got.path).toBe("/hook");
    expect(got.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(got.body);
    expect(body).toEqual({
      id: got.headers["x-service-delivery"],
      type: "note.appended",
      created_at: appended.updated_at,
      data: {
        note: { id: note.id, filename: "deploys.log", title: "deploys.log" },
        text: "deploy 4f2a1c ok\n",
        byte_size: appended.byte_size,
        updated_at: appended.updated_at,
      },
    });
    expect(body.id).toMatch(/^dlv_/);

    // Our scheme: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">, keyed by the decoded secret.
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(got.headers["x-service-signature"]!)!;
    const key = Buffer.from(note.webhook_secret.slice("whsec_".length), "base64");
    expect(createHmac("sha256", key).update(`${t}.${got.body}`).digest("hex")).toBe(v1!);
    // Standard Webhooks, verified by its own library with the same secret.
    expect(got.headers["webhook-id"]).toBe(body.id);
    expect(new Webhook(note.webhook_secret).verify(got.body, got.headers)).toEqual(body);
    // A tampered body fails both.
    expect(() => new Webhook(note.webhook_secret).verify(got.body.replace("4f2a1c", "000000"), got.headers)).toThrow();
  });

  test("one delivery per append, in append order, each with its own delivery id", async () => {
    const { token } = await setup();
    for (let i = 0; i < 20; i++) expect((await append(token, `event ${i}`)).status).toBe(200);
    await r.waitFor(20);
    await h.jobs.drain();
    expect(r.received).toHaveLength(20);
    expect(r.received.map((x) => JSON.parse(x.body).data.text)).toEqual(Array.from({ length: 20 }, (_, i) => `event ${i}\n`));
    expect(new Set(r.received.map((x) => x.headers["x-service-delivery"])).size).toBe(20);
  });

  test("an append and its delivery job commit together: a refused append enqueues nothing", async () => {
    const { token, id } = await setup();
    await h.deps.db.update(notes).set({ byteSize: 3 * 1024 * 1024 }).where(eq(notes.id, id));
    expect((await append(token, "too much")).status).toBe(403);
    await h.jobs.drain();
    expect(r.received).toHaveLength(0);
    expect(await h.deps.db.select({ n: count() }).from(jobs).where(eq(jobs.queue, "webhook"))).toEqual([{ n: 0 }]);
  });
});

describe("chat formats", () => {
  const long = "x".repeat(5000);
  const shapes: [string, (b: any) => void][] = [
    ["slack", (b) => expect(b).toEqual({ text: "[deploys.log] deploy ok" })],
    ["mattermost", (b) => expect(b).toEqual({ text: "[deploys.log] deploy ok" })],
    ["google_chat", (b) => expect(b).toEqual({ text: "[deploys.log] deploy ok" })],
    ["discord", (b) => expect(b).toEqual({ content: "[deploys.log] deploy ok", allowed_mentions: { parse: [] } })],
    [
      "teams",
      (b) => {
        expect(b.type).toBe("message");
        expect(b.attachments).toHaveLength(1);
        const a = b.attachments[0];
        expect(a.contentType).toBe("application/vnd.microsoft.card.adaptive");
        expect(a.content).toMatchObject({ type: "AdaptiveCard", $schema: "http://adaptivecards.io/schemas/adaptive-card.json" });
        expect(a.content.body.map((x: { text: string }) => x.text)).toEqual(["deploys.log", "deploy ok"]);
        expect(a.content.body.every((x: { type: string; wrap: boolean }) => x.type === "TextBlock" && x.wrap)).toBe(true);
      },
    ],
  ];
  for (const [format, check] of shapes) {
    test(`${format}: shaped as the platform's incoming webhook expects, still signed`, async () => {
      const { token, note } = await setup({ format });
      expect(note.webhook_format).toBe(format);
      await append(token, "deploy ok");
      await r.waitFor(1);
      await h.jobs.drain();
      const got = r.received[0]!;
      check(JSON.parse(got.body));
      expect(new Webhook(note.webhook_secret).verify(got.body, got.headers)).toBeTruthy();
    });
  }

  test("long text is cut to each platform's limit", async () => {
    const limits: Record<string, (b: any) => string> = {
      discord: (b) => b.content,
      google_chat: (b) => b.text,
    };
    for (const [format, textOf] of Object.entries(limits)) {
      const { token } = await setup({ format });
      await append(token, long);
      await r.waitFor(1);
      await h.jobs.drain();
      const text = textOf(JSON.parse(r.received[0]!.body));
      expect([...text].length).toBe(format === "discord" ? 2000 : 4096);
      expect(text.endsWith("…")).toBe(true);
      await h.close();
      r.stop();
    }
    h = await harness();
  });

  test("an unknown format is 422", async () => {
    const { token, id } = await setup();
    const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_format: "irc" } } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0].field).toBe("note.webhook_format");
  });
});

describe("failures, retries and auto-disable", () => {
  test("a 500 is retried with backoff: the same delivery id arrives again and the log shows both attempts", async () => {
    const { token, id } = await setup({ respond: (_req, n) => new Response(n === 1 ? "boom" : "ok", { status: n === 1 ? 500 : 200 }) });
    await append(token, "retry me");
    await r.waitFor(1);
    await h.jobs.drain();
    const [job] = await h.deps.db.select({ status: jobs.status, run_at: jobs.runAt, attempts: jobs.attempts }).from(jobs).where(eq(jobs.queue, "webhook")).limit(1);
    expect(job!.status).toBe("pending");
    expect(job!.run_at - h.clock.now()).toBe(10_000); // the first retry comes 10 s later
    h.clock.advance(10_000);
    await h.jobs.drain();
    await r.waitFor(2);
    expect(r.received[1]!.headers["x-service-delivery"]).toBe(r.received[0]!.headers["x-service-delivery"]);
    const log = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(log.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [2, 200],
      [1, 500],
    ]);
    expect(log[1]).toMatchObject({ error: "HTTP 500", response: "boom", disabled_webhook: false });
    expect(typeof log[0].duration_ms).toBe("number");
  });

  test("ten consecutive failures disable the webhook; saving the note re-arms it", async () => {
    let failing = true;
    const { token, id } = await setup({ respond: () => new Response("no", { status: failing ? 503 : 200 }) });
    await append(token, "a");
    await append(token, "b");
    await runRetries(12);
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.webhook_status).toBe("disabled");
    expect(r.received).toHaveLength(10);
    const res = await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token });
    expect(res.headers.get("x-webhook-status")).toBe("disabled");
    const log = await res.json();
    expect(log[0]).toMatchObject({ disabled_webhook: true });
    expect(log[0].error).toContain("disabled after 10 consecutive failures");
    // Disabled: further appends deliver nothing.
    await append(token, "c");
    await h.jobs.drain();
    expect(r.received).toHaveLength(10);
    // Any save re-arms it.
    failing = false;
    const saved = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "Deploys" } } });
    expect((await saved.json()).webhook_status).toBe("enabled");
    await append(token, "d");
    await r.waitFor(11);
    expect(JSON.parse(r.received[10]!.body).data.text).toBe("d\n");
  });

  test("410 Gone disables at once", async () => {
    const { token, id } = await setup({ respond: () => new Response("gone", { status: 410 }) });
    await append(token, "a");
    await r.waitFor(1);
    await h.jobs.drain();
    const note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.webhook_status).toBe("disabled");
    expect(r.received).toHaveLength(1);
  });

  test("Retry-After on a 429 decides when the next attempt comes", async () => {
    const { token } = await setup({ respond: () => new Response("slow down", { status: 429, headers: { "retry-after": "120" } }) });
    await append(token, "a");
    await r.waitFor(1);
    await h.jobs.drain();
    const [job] = await h.deps.db.select({ run_at: jobs.runAt }).from(jobs).where(eq(jobs.queue, "webhook")).limit(1);
    expect(job!.run_at - h.clock.now()).toBe(120_000);
  });

  test("a redirect is a failure and is not followed", async () => {
    const { token, id } = await setup({
      respond: (req) => (req.path === "/hook" ? new Response(null, { status: 302, headers: { location: `${r.url}/elsewhere` } }) : new Response("ok")),
    });
    await append(token, "a");
    await r.waitFor(1);
    await h.jobs.drain();
    expect(r.received.map((x) => x.path)).toEqual(["/hook"]);
    const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(attempt).toMatchObject({ status_code: 302, error: "redirect 302 not followed" });
  });

  test("at most 8 KB of the receiver's answer is kept", async () => {
    const { token, id } = await setup({ respond: () => new Response("y".repeat(100_000), { status: 500 }) });
    await append(token, "a");
    await r.waitFor(1);
    await h.jobs.drain();
    const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(attempt.response.length).toBe(8 * 1024);
  });

  test("a hanging receiver times out and never holds up appends", async () => {
    let release!: () => void;
    const hang = new Promise<void>((resolve) => (release = resolve));
    const { token, id } = await setup({ respond: async () => (await hang, new Response("late")) });
    await append(token, "first");
    await r.waitFor(1);
    // The delivery is in flight and hanging; appends still answer.
    for (let i = 0; i < 5; i++) expect((await append(token, `during ${i}`)).status).toBe(200);
    await h.jobs.drain(); // returns once the 400 ms timeout ended the attempt
    release();
    const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toBe("no answer within 400 ms");
  });
});

describe("SSRF guard", () => {
  const refused = [
    "http://127.0.0.1/hook",
    "http://10.0.0.1/hook",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://2130706433/hook",
    "http://0177.0.0.1/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://[::127.0.0.1]/hook",
    "http://[::7f00:1]/hook",
    "http://[::ffff:0:127.0.0.1]/hook",
    "http://[::ffff:0:a9fe:a9fe]/latest/meta-data",
    "http://[2001::1]/hook",
    "http://[2002:7f00:1::1]/hook",
    "http://[64:ff9b::127.0.0.1]/hook",
    "http://[64:ff9b:1::a00:1]/hook",
  ];
  test("literal private, loopback, link-local, CGNAT, metadata and mapped addresses are 422 when set", async () => {
    h = await harness();
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "x" } })).json();
    for (const url of refused) {
      const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: url } } });
      expect(res.status, url).toBe(422);
      expect((await errorOf(res)).details[0]).toMatchObject({ field: "note.webhook_url", code: "forbidden_target" });
    }
    for (const url of ["ftp://example.com/x", "not a url", "http://user:pw@example.com/"]) {
      const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: url } } });
      expect((await errorOf(res)).details[0]).toMatchObject({ field: "note.webhook_url", code: "invalid" });
    }
    const ok = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: "https://hooks.example.com/x" } } });
    expect(ok.status).toBe(200);
  });

  test("a name that resolves to loopback is refused at delivery; nothing reaches the receiver", async () => {
    h = await harness({ clock: new FakeClock(Date.now()) });
    r = receiver();
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "x" } })).json();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `http://localhost:${r.port}/hook` } } });
    await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "y" } });
    await h.jobs.drain();
    expect(r.received).toHaveLength(0);
    const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(attempt.error).toBe("target refused: localhost resolves to a non-public address");
  });

  test("names resolving to IPv4-compatible, translated, Teredo, 6to4 or NAT64 forms are refused; the log names no address", async () => {
    const resolved: Record<string, string> = {
      "compat.example.com": "::7f00:1",
      "compat-dotted.example.com": "::127.0.0.1",
      "translated.example.com": "::ffff:0:7f00:1",
      "teredo.example.com": "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "sixtofour.example.com": "2002:a9fe:a9fe::1",
      "nat64.example.com": "64:ff9b::a00:1",
      "nat64-local.example.com": "64:ff9b:1::808:808",
      "mixed.example.com": "8.8.8.8",
    };
    h = await harness();
    h.deps.resolve = async (host) =>
      host === "mixed.example.com"
        ? [{ address: "8.8.8.8", family: 4 }, { address: "::ffff:0:a00:1", family: 6 }]
        : [{ address: resolved[host]!, family: resolved[host]!.includes(":") ? 6 : 4 }];
    const token = await h.token(await h.account("dev"));
    for (const host of Object.keys(resolved)) {
      const { id } = await (await h.request("POST", `/api/v1/notes/by-filename/${host}.log/append`, { token, body: { text: "x" } })).json();
      const set = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `https://${host}/hook` } } });
      expect(set.status, host).toBe(200);
      await h.request("POST", `/api/v1/notes/by-filename/${host}.log/append`, { token, body: { text: "y" } });
      await h.jobs.drain();
      const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
      expect(attempt, host).toMatchObject({ status_code: null, duration_ms: 0 });
      expect(attempt.error, host).toBe(`target refused: ${host} resolves to a non-public address`);
    }
  });

  test("the 422 for a literal names only what the user gave, never a resolved address", async () => {
    h = await harness();
    h.deps.resolve = async () => [{ address: "10.9.8.7", family: 4 }];
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "x" } })).json();
    const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: "http://[::127.0.0.1]/hook" } } });
    expect(res.status).toBe(422);
    const { message } = (await errorOf(res)).details[0];
    expect(message).toContain("[::7f00:1]");
    expect(message).not.toContain("10.9.8.7");
    const byName = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: "https://internal.example.com/" } } });
    expect(byName.status).toBe(200);
  });

  test("a name resolving to a private address is refused before any connection", async () => {
    h = await harness();
    h.deps.resolve = async () => [{ address: "10.1.2.3", family: 4 }];
    const token = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "x" } })).json();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: "https://internal.example.com/hook" } } });
    await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "y" } });
    await h.jobs.drain();
    const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(attempt).toMatchObject({ status_code: null, duration_ms: 0 });
    expect(attempt.error).toBe("target refused: internal.example.com resolves to a non-public address");
    expect(attempt.error).not.toContain("10.1.2.3");
  });

  test("a connection error to an allowed name tells the name, not the address it resolved to", async () => {
    const { token, id } = await setup();
    r.stop();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `http://intranet.example.com:${r.port}/hook` } } });
    h.deps.resolve = async () => [{ address: "127.0.0.1", family: 4 }];
    await append(token, "nobody listens");
    await h.jobs.drain();
    const [attempt] = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toContain(`intranet.example.com:${r.port}`);
    expect(attempt.error).not.toContain("127.0.0.1");
  });

  test("NOTESTREAM_WEBHOOK_ALLOW_CIDRS opens chosen ranges, by literal and by name", async () => {
    const { token, id } = await setup();
    await append(token, "literal");
    await r.waitFor(1);
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `http://localhost:${r.port}/by-name` } } });
    h.deps.resolve = async () => [{ address: "127.0.0.1", family: 4 }];
    await append(token, "by name");
    await r.waitFor(2);
    expect(r.received.map((x) => x.path)).toEqual(["/hook", "/by-name"]);
    expect(r.received[1]!.headers.host).toBe(`localhost:${r.port}`);
  });
});

describe("webhook settings", () => {
  test("only streams take a webhook; null removes it and cancels pending deliveries", async () => {
    const { token, id } = await setup({ respond: () => new Response("no", { status: 500 }) });
    const editable = await (await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).json();
    const res = await h.request("PATCH", `/api/v1/notes/${editable.id}`, { token, body: { note: { webhook_url: "https://example.com/x" } } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0].code).toBe("not_a_stream");

    await append(token, "a");
    await r.waitFor(1);
    await h.jobs.drain();
    const removed = await (await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: null } } })).json();
    expect(removed).toMatchObject({ webhook_url: null, webhook_status: "none" });
    expect(await h.deps.db.select({ status: jobs.status }).from(jobs).where(eq(jobs.queue, "webhook"))).toEqual([{ status: "failed" }]);
    await runRetries(2);
    expect(r.received).toHaveLength(1);
  });

  test("the secret stays when the URL changes", async () => {
    const { token, id, note } = await setup();
    const changed = await (await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: `${r.url}/other` } } })).json();
    expect(changed.webhook_secret).toBe(note.webhook_secret);
  });

  test("another workspace cannot read a note's delivery log", async () => {
    const { id } = await setup();
    const other = await h.token(await h.account("dev"));
    expect((await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token: other })).status).toBe(404);
  });
});
