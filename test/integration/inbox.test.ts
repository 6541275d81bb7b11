import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { count, eq, sql } from "drizzle-orm";
import { inboxDeliveries, jobs, notes, workspaces } from "../../src/db/tables";
import { runAllTasks, runTask } from "../../src/schedule";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
let acct: { accountId: string; workspaceId: string; email: string };
let token: string;
beforeEach(async () => {
  h = await harness();
  acct = await h.account("dev");
  token = await h.token(acct, ["read", "write"]);
});
afterEach(() => h.close());

const iso = (ms: number) => new Date(ms).toISOString();
const KB = 1024;
const MB = 1024 * KB;
/** The inbox body cap: 256 KB. */
const INBOX_CAP = 256 * KB;
const DEV_NOTE_CAP = 3 * MB;
const TOKEN_SHAPE = /^inb_[0-9A-Za-z]{32}$/;

/** Creates a stream by appending to it; returns its id. */
async function stream(filename = "events.log", first = "started"): Promise<string> {
  const res = await h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append`, { token, body: { text: first } });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

async function enableInbox(noteId: string): Promise<{ inbox_url: string; token: string }> {
  const res = await h.request("POST", `/api/v1/notes/${noteId}/inbox`, { token });
  expect(res.status).toBe(201);
  return res.json();
}

/** POSTs to an inbox URL as a third-party sender would: no Authorization header. */
function deliver(inboxToken: string, body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }) {
  return h.request("POST", `/h/${inboxToken}`, { body, headers });
}

async function noteOf(noteId: string) {
  const res = await h.request("GET", `/api/v1/notes/${noteId}`, { token });
  expect(res.status).toBe(200);
  return res.json();
}

async function deliveries(noteId: string, status?: "pending" | "delivered" | "dead"): Promise<any[]> {
  const res = await h.request("GET", `/api/v1/notes/${noteId}/inbox/deliveries${status ? `?status=${status}` : ""}`, { token });
  expect(res.status).toBe(200);
  return res.json();
}

/** How many payloads are stored. */
const deliveriesStored = async () => (await h.deps.db.select({ n: count() }).from(inboxDeliveries))[0]!.n;

/** The jobs of one queue, oldest first (the order they were enqueued in). */
const jobsOf = (queue: string) =>
  h.deps.db.select({ status: jobs.status, attempts: jobs.attempts, payload: jobs.payload, serial_key: jobs.serialKey }).from(jobs).where(eq(jobs.queue, queue)).orderBy(jobs.id);

/** The workspace's storage as the account shows it. */
async function storageUsed(t = token): Promise<number> {
  const res = await h.request("GET", "/api/v1/account", { token: t });
  expect(res.status).toBe(200);
  return (await res.json()).usage.storage_bytes;
}

const TEXT = { "content-type": "text/plain" };
const DEV_STORAGE = 15 * 1024 * MB;

/**
 * Leaves the workspace `room` bytes of storage: a payload still fits, the line it becomes may not.
 * That refusal is one time can cure (stored bodies are pruned, the trash is purged), so it is the
 * inbox's transient failure: retried. Returns what gives the room back.
 */
async function squeezeStorage(room: number): Promise<() => Promise<void>> {
  const ws = eq(workspaces.id, acct.workspaceId);
  const [row] = await h.deps.db.select({ used: workspaces.storageUsed }).from(workspaces).where(ws);
  const offset = DEV_STORAGE - room - row!.used;
  await h.deps.db.update(workspaces).set({ storageUsed: sql`${workspaces.storageUsed} + ${offset}` }).where(ws);
  return async () => {
    await h.deps.db.update(workspaces).set({ storageUsed: sql`${workspaces.storageUsed} - ${offset}` }).where(ws);
  };
}

const githubPush = {
  ref: "refs/heads/main",
  before: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
  after: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
  repository: { id: 1296269, name: "Hello-World", full_name: "octocat/Hello-World", private: false, owner: { login: "octocat", id: 1 } },
  pusher: { name: "octocat", email: "octocat@github.com" },
  sender: { login: "octocat", id: 1 },
  created: false,
  deleted: false,
  forced: false,
  compare: "https://github.com/octocat/Hello-World/compare/6113728f27ae...0d1a26e67d8f",
  commits: [
    { id: "a10867b14bb761a232cd80139fbd4c0d33264240", message: "Add an install guide", author: { name: "Mona Lisa", email: "mona@github.com" } },
    { id: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c", message: "Fix typo in the install guide\n\nCloses #12.", author: { name: "Mona Lisa", email: "mona@github.com" } },
  ],
  head_commit: { id: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c", message: "Fix typo in the install guide\n\nCloses #12.", author: { name: "Mona Lisa", email: "mona@github.com" } },
};
const GITHUB_HEADERS = { "content-type": "application/json", "x-github-event": "push", "user-agent": "GitHub-Hookshot/3a1b2c" };
const GITHUB_SUMMARY = 'GitHub push to octocat/Hello-World main by octocat: 2 commits, "Fix typo in the install guide"';

const stripeEvent = {
  id: "evt_3MtwBwLkdIwHu7ix0snN8B0M",
  object: "event",
  api_version: "2022-11-15",
  created: 1680064028,
  data: {
    object: {
      id: "pi_3MtwBwLkdIwHu7ix28a3tqPa",
      object: "payment_intent",
      amount: 4200,
      amount_received: 4200,
      currency: "usd",
      customer: null,
      livemode: false,
      payment_method_types: ["card"],
      receipt_email: null,
      status: "succeeded",
    },
  },
  livemode: false,
  pending_webhooks: 1,
  request: { id: "req_Lsg9xkhDjSsL2Q", idempotency_key: null },
  type: "payment_intent.succeeded",
};

const alertmanager = {
  version: "4",
  groupKey: '{}:{alertname="HighErrorRate"}',
  truncatedAlerts: 0,
  status: "firing",
  receiver: "notestream",
  groupLabels: { alertname: "HighErrorRate" },
  commonLabels: { alertname: "HighErrorRate", job: "api", severity: "critical" },
  commonAnnotations: { summary: "Error rate above 5% for 10 minutes" },
  externalURL: "http://alertmanager.example.com:9093",
  alerts: ["api-1:9090", "api-2:9090"].map((instance) => ({
    status: "firing",
    labels: { alertname: "HighErrorRate", instance, job: "api", severity: "critical" },
    annotations: { summary: "Error rate above 5% for 10 minutes" },
    startsAt: "2026-11-22T09:50:00.000Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: "http://prometheus.example.com:9090/graph",
    fingerprint: `fp-${instance}`,
  })),
};

describe("managing a stream's inbox", () => {
  test("POST /notes/{id}/inbox on a stream answers 201 with the inbox URL and a long random token", async () => {
    const id = await stream();
    expect((await noteOf(id)).inbox_enabled).toBe(false);
    const res = await h.request("POST", `/api/v1/notes/${id}/inbox`, { token });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(["inbox_url", "token"]);
    // inb_ + 32 base62 characters: 32 · log2(62) ≈ 190 bits, well over 128.
    expect(body.token).toMatch(TOKEN_SHAPE);
    expect(32 * Math.log2(62)).toBeGreaterThanOrEqual(128);
    expect(body.inbox_url).toBe(`http://notestream.test/h/${body.token}`);
    expect((await noteOf(id)).inbox_enabled).toBe(true);
    // The token is stored only as its SHA-256.
    const [raw] = await h.deps.db.select({ hash: notes.inboxTokenHash }).from(notes).where(eq(notes.id, id));
    expect(raw!.hash).toBe(new Bun.CryptoHasher("sha256").update(body.token).digest("hex"));
  });

  test("on an editable note it is 422 not_a_stream and enables nothing", async () => {
    const created = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Plan", plain_body: "text" } } });
    const { id } = await created.json();
    const res = await h.request("POST", `/api/v1/notes/${id}/inbox`, { token });
    expect(res.status).toBe(422);
    const err = await errorOf(res);
    expect(err.code).toBe("validation_failed");
    expect(err.details[0].code).toBe("not_a_stream");
    expect((await noteOf(id)).inbox_enabled).toBe(false);
  });

  test("a read-only token is 403 insufficient_scope", async () => {
    const id = await stream();
    const readOnly = await h.token(acct, ["read"]);
    const res = await h.request("POST", `/api/v1/notes/${id}/inbox`, { token: readOnly });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe("insufficient_scope");
    const del = await h.request("DELETE", `/api/v1/notes/${id}/inbox`, { token: readOnly });
    expect(del.status).toBe(403);
    expect((await noteOf(id)).inbox_enabled).toBe(false);
  });

  test("a token pinned to one note cannot manage its inbox (403), even with write scope", async () => {
    const id = await stream();
    const pinned = await h.token(acct, ["read", "write"], { noteId: id });
    for (const method of ["POST", "DELETE"]) {
      const res = await h.request(method, `/api/v1/notes/${id}/inbox`, { token: pinned });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("insufficient_scope");
    }
    expect((await noteOf(id)).inbox_enabled).toBe(false);
  });

  test("another workspace's note is 404, as if it did not exist", async () => {
    const id = await stream();
    const other = await h.token(await h.account("dev"), ["read", "write"]);
    for (const [method, path] of [
      ["POST", `/api/v1/notes/${id}/inbox`],
      ["DELETE", `/api/v1/notes/${id}/inbox`],
      ["GET", `/api/v1/notes/${id}/inbox/deliveries`],
    ] as const) {
      const res = await h.request(method, path, { token: other });
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    expect((await noteOf(id)).inbox_enabled).toBe(false);
  });
});

describe("receiving payloads", () => {
  test("a GitHub push without auth is 202 {ok, id}, and after the job one timestamped line is appended", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const receivedAt = h.clock.now();
    const res = await deliver(inbox.token, JSON.stringify(githubPush), GITHUB_HEADERS);
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body).toEqual({ ok: true, id: expect.stringMatching(/^ibx_/) });

    // Processed later: the line carries the time of receipt, not of processing.
    h.clock.advance(5_000);
    await h.jobs.drain();
    const line = `${iso(receivedAt)} ${GITHUB_SUMMARY}`;
    const note = await noteOf(id);
    expect(note.plain_body).toBe(`started\n${line}\n`);
    expect(note.byte_size).toBe(Buffer.byteLength(note.plain_body));

    const [d] = await deliveries(id);
    expect(d).toMatchObject({ id: body.id, status: "delivered", attempts: 1, line, last_error: null, received_at: iso(receivedAt), delivered_at: iso(h.clock.now()) });
    expect(d.content_type).toBe("application/json");
    expect(d.bytes).toBe(Buffer.byteLength(JSON.stringify(githubPush)));

    // Draining again appends nothing more.
    await h.jobs.drain();
    expect((await noteOf(id)).plain_body).toBe(`started\n${line}\n`);
  });

  const senders: [string, string, Record<string, string>, string][] = [
    ["a Stripe event", JSON.stringify(stripeEvent), { "content-type": "application/json; charset=utf-8", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)" }, "Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 42.00 USD succeeded"],
    ["an Alertmanager alert", JSON.stringify(alertmanager), { "content-type": "application/json", "user-agent": "Alertmanager/0.27.0" }, "Alertmanager FIRING 2 alerts (2 firing) - Error rate above 5% for 10 minutes: HighErrorRate (critical, api-1:9090), HighErrorRate (critical, api-2:9090)"],
    // Gitea and Forgejo copy GitHub's payload and send X-GitHub-Event too: their own header must be kept to tell them apart.
    ["a Gitea push", JSON.stringify(githubPush), { "content-type": "application/json", "x-gitea-event": "push", "x-github-event": "push" }, GITHUB_SUMMARY.replace("GitHub", "Gitea")],
    ["a Forgejo push", JSON.stringify(githubPush), { "content-type": "application/json", "x-forgejo-event": "push", "x-gitea-event": "push", "x-github-event": "push" }, GITHUB_SUMMARY.replace("GitHub", "Forgejo")],
    ["a text/plain body with newlines and control characters", "Backup finished\n\tfiles: 12\r\n\u0007bytes: 4096\u202E\n2026-01-01T00:00:00.000Z forged", { "content-type": "text/plain" }, "Backup finished files: 12 bytes: 4096 2026-01-01T00:00:00.000Z forged"],
  ];
  for (const [what, payload, headers, summary] of senders) {
    test(`${what} becomes exactly one line: <ISO timestamp> ${summary.slice(0, 30)}…`, async () => {
      const id = await stream();
      const inbox = await enableInbox(id);
      const receivedAt = h.clock.now();
      const res = await deliver(inbox.token, payload, headers);
      expect(res.status).toBe(202);
      h.clock.advance(1_000);
      await h.jobs.drain();
      const body = (await noteOf(id)).plain_body as string;
      expect(body).toBe(`started\n${iso(receivedAt)} ${summary}\n`);
      expect(body.split("\n")).toHaveLength(3);
    });
  }

  test("payloads sent back to back appear in the order they were received", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const expected: string[] = [];
    for (let i = 1; i <= 6; i++) {
      const res = await deliver(inbox.token, `event ${i}`, { "content-type": "text/plain" });
      expect(res.status).toBe(202);
      expected.push(`${iso(h.clock.now())} event ${i}`);
      h.clock.advance(250);
    }
    await h.jobs.drain();
    expect((await noteOf(id)).plain_body).toBe(`started\n${expected.join("\n")}\n`);
    expect((await deliveries(id, "delivered")).map((d) => d.line)).toEqual([...expected].reverse());
  });

  test("a payload waiting for a retry holds back later ones, so lines keep the order of receipt", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const release = await squeezeStorage(20);
    const t1 = h.clock.now();
    expect((await deliver(inbox.token, "first", { "content-type": "text/plain" })).status).toBe(202);
    await h.jobs.drain(); // attempt 1 fails on the storage cap; the retry is due in 10 s
    await release();
    h.clock.advance(1_000);
    const t2 = h.clock.now();
    expect((await deliver(inbox.token, "second", { "content-type": "text/plain" })).status).toBe(202);
    await h.jobs.drain();
    // "second" would fit now, but waits behind "first".
    expect((await noteOf(id)).plain_body).toBe("started\n");
    h.clock.advance(10_000);
    await h.jobs.drain();
    expect((await noteOf(id)).plain_body).toBe(`started\n${iso(t1)} first\n${iso(t2)} second\n`);
  });

  test("payloads received while earlier ones are still queued keep their order", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const sent = await Promise.all([1, 2, 3, 4].map((i) => deliver(inbox.token, `burst ${i}`, { "content-type": "text/plain" })));
    expect(sent.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    const ids = await Promise.all(sent.map(async (r) => (await r.json()).id as string));
    await h.jobs.drain();
    // The order of receipt is the order the deliveries were stored in: each one's job is enqueued
    // in the write that stores it, so the jobs' ids give that order.
    const order = (await jobsOf("inbox")).map((j) => JSON.parse(j.payload).deliveryId as string);
    const lines = new Map((await h.deps.db.select({ id: inboxDeliveries.id, line: inboxDeliveries.line }).from(inboxDeliveries)).map((d) => [d.id, d.line]));
    expect(lines.size).toBe(order.length);
    const stored = order.map((id) => ({ id, line: lines.get(id)! }));
    expect(stored.map((s) => s.id).sort()).toEqual([...ids].sort());
    const body = (await noteOf(id)).plain_body as string;
    expect(body).toBe(`started\n${stored.map((s) => s.line).join("\n")}\n`);
  });

  test("an unknown token, or one without the inb_ prefix, is 404 in the error envelope and stores nothing", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const unknown = inbox.token.slice(0, -1) + (inbox.token.endsWith("a") ? "b" : "a");
    for (const t of [unknown, "inb_" + "0".repeat(32), "nst_" + inbox.token.slice(4), "x"]) {
      const res = await deliver(t, JSON.stringify(githubPush), GITHUB_HEADERS);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    expect(await deliveriesStored()).toBe(0);
  });

  test("rotating the inbox makes the old URL 404 at once while the new one works", async () => {
    const id = await stream();
    const first = await enableInbox(id);
    expect((await deliver(first.token, "before rotation", { "content-type": "text/plain" })).status).toBe(202);
    const second = await enableInbox(id);
    expect(second.token).toMatch(TOKEN_SHAPE);
    expect(second.token).not.toBe(first.token);
    expect(second.inbox_url).toBe(`http://notestream.test/h/${second.token}`);

    const old = await deliver(first.token, "after rotation, old url", { "content-type": "text/plain" });
    expect(old.status).toBe(404);
    expect((await errorOf(old)).code).toBe("not_found");
    expect((await deliver(second.token, "after rotation, new url", { "content-type": "text/plain" })).status).toBe(202);

    await h.jobs.drain();
    const body = (await noteOf(id)).plain_body as string;
    expect(body).toContain(" before rotation\n");
    expect(body).toContain(" after rotation, new url\n");
    expect(body).not.toContain("old url");
    expect((await noteOf(id)).inbox_enabled).toBe(true);
  });

  test("DELETE /notes/{id}/inbox disables it: the URL is 404 and inbox_enabled is false", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const res = await h.request("DELETE", `/api/v1/notes/${id}/inbox`, { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, inbox_enabled: false });
    const after = await deliver(inbox.token, "hello", { "content-type": "text/plain" });
    expect(after.status).toBe(404);
    expect((await errorOf(after)).code).toBe("not_found");
    expect((await noteOf(id)).inbox_enabled).toBe(false);
    expect(await deliveriesStored()).toBe(0);
  });

  test("deleting the stream takes its inbox to the trash: the URL is 404; its deliveries go at the purge", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    expect((await deliver(inbox.token, "queued", { "content-type": "text/plain" })).status).toBe(202);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    await h.jobs.drain();
    expect(await deliveriesStored()).toBe(1);
    const after = await deliver(inbox.token, "too late", { "content-type": "text/plain" });
    expect(after.status).toBe(404);
    expect((await errorOf(after)).code).toBe("not_found");
    h.clock.advance(30 * 86_400_000);
    await runAllTasks(h.deps);
    expect(await deliveriesStored()).toBe(0);
  });

  test("a 300 KB body is 413 payload_too_large and nothing is stored: inboxes take 256 KB", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const res = await deliver(inbox.token, new Uint8Array(300 * KB).fill(0x61), { "content-type": "text/plain" });
    expect(res.status).toBe(413);
    const err = await errorOf(res);
    expect(err.code).toBe("payload_too_large");
    expect(err.message).toContain(String(INBOX_CAP));
    // One byte over, streamed or declared by Content-Length: refused the same way.
    const justOver = await deliver(inbox.token, new Uint8Array(INBOX_CAP + 1).fill(0x61), { "content-type": "text/plain" });
    expect(justOver.status).toBe(413);
    const declared = await deliver(inbox.token, new Uint8Array(INBOX_CAP + 1).fill(0x61), { "content-type": "text/plain", "content-length": String(INBOX_CAP + 1) });
    expect(declared.status).toBe(413);
    await h.jobs.drain();
    expect(await deliveriesStored()).toBe(0);
    expect((await noteOf(id)).plain_body).toBe("started\n");
  });

  test("a body of exactly 256 KB is accepted and becomes a line of at most 1,000 characters", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const res = await deliver(inbox.token, new Uint8Array(INBOX_CAP).fill(0x61), { "content-type": "text/plain" });
    expect(res.status).toBe(202);
    await h.jobs.drain();
    const [d] = await deliveries(id);
    expect(d).toMatchObject({ status: "delivered", bytes: INBOX_CAP });
    expect([...d.line].length).toBe(1000);
    expect(d.line).toStartWith(`${iso(h.clock.now())} aaaa`);
  });

  test("the 121st payload within a minute is 429 with Retry-After; other inboxes and the next minute are unaffected", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    for (let i = 1; i <= 120; i++) {
      const res = await deliver(inbox.token, `p${i}`, { "content-type": "text/plain" });
      if (res.status !== 202) throw new Error(`payload ${i} answered ${res.status}`);
    }
    const limited = await deliver(inbox.token, "p121", { "content-type": "text/plain" });
    expect(limited.status).toBe(429);
    expect((await errorOf(limited)).code).toBe("rate_limited");
    // The fake clock sits on a minute boundary: the window resets in 60 s.
    expect(limited.headers.get("retry-after")).toBe("60");

    const otherId = await stream("other.log");
    const other = await enableInbox(otherId);
    expect((await deliver(other.token, "elsewhere", { "content-type": "text/plain" })).status).toBe(202);

    h.clock.advance(30_000);
    const stillLimited = await deliver(inbox.token, "p122", { "content-type": "text/plain" });
    expect(stillLimited.status).toBe(429);
    expect(stillLimited.headers.get("retry-after")).toBe("30");
    h.clock.advance(30_000);
    expect((await deliver(inbox.token, "next minute", { "content-type": "text/plain" })).status).toBe(202);

    await h.jobs.drain();
    const lines = ((await noteOf(id)).plain_body as string).trimEnd().split("\n");
    expect(lines).toHaveLength(1 + 120 + 1);
    expect(lines.some((l) => l.endsWith(" p121") || l.endsWith(" p122"))).toBe(false);
  });

  test("the raw request is stored (pending) before the 202, without Authorization or Cookie", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const payload = JSON.stringify(githubPush);
    const res = await deliver(inbox.token, payload, {
      ...GITHUB_HEADERS,
      authorization: "Bearer sk_live_supersecret",
      cookie: "session=s3cr3t-cookie",
      "x-hub-signature-256": "sha256=abc",
    });
    expect(res.status).toBe(202);
    const { id: deliveryId } = await res.json();

    // Straight after the 202, before any draining.
    const rows = await h.deps.db
      .select({
        status: inboxDeliveries.status,
        note_id: inboxDeliveries.noteId,
        headers: inboxDeliveries.headers,
        body: inboxDeliveries.body,
        content_type: inboxDeliveries.contentType,
        received_at: inboxDeliveries.receivedAt,
      })
      .from(inboxDeliveries)
      .where(eq(inboxDeliveries.id, deliveryId));
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row!.status).toBe("pending");
    expect(row!.note_id).toBe(id);
    expect(row!.received_at).toBe(h.clock.now());
    expect(row!.content_type).toBe("application/json");
    expect(Buffer.from(row!.body).toString("utf8")).toBe(payload);
    const stored = JSON.parse(row!.headers) as Record<string, string>;
    expect(stored).toMatchObject({ "content-type": "application/json", "x-github-event": "push", "user-agent": "GitHub-Hookshot/3a1b2c" });
    expect(Object.keys(stored).map((k) => k.toLowerCase())).not.toContain("authorization");
    expect(Object.keys(stored).map((k) => k.toLowerCase())).not.toContain("cookie");
    expect(row!.headers).not.toContain("supersecret");
    expect(row!.headers).not.toContain("s3cr3t-cookie");
    // Its job is queued with it.
    const inboxJobs = await jobsOf("inbox");
    expect(inboxJobs.map((j) => JSON.parse(j.payload).deliveryId)).toEqual([deliveryId]);

    await h.jobs.drain();
    expect((await deliveries(id))[0].status).toBe("delivered");
  });
});

describe("dead letters and replay", () => {
  test("a payload whose line does not fit the workspace's storage retries with backoff, is dead-lettered after 9 attempts, and a replay delivers it", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const release = await squeezeStorage(JSON.stringify(githubPush).length + 10);

    const receivedAt = h.clock.now();
    const res = await deliver(inbox.token, JSON.stringify(githubPush), GITHUB_HEADERS);
    expect(res.status).toBe(202);
    const { id: deliveryId } = await res.json();
    await h.jobs.drain();

    // While it retries: pending, with the cap named in last_error.
    const [retrying] = await deliveries(id, "pending");
    expect(retrying).toMatchObject({ id: deliveryId, status: "pending", attempts: 1, line: null, delivered_at: null });
    expect(retrying.last_error).toContain("of storage");
    expect(await deliveries(id, "dead")).toEqual([]);

    let dead: any[] = [];
    let loops = 0;
    for (; loops < 20; loops++) {
      dead = await deliveries(id, "dead");
      if (dead.length > 0) break;
      const [p] = await deliveries(id, "pending");
      expect(p.status).toBe("pending");
      expect(p.last_error).toContain("of storage");
      h.clock.advance(7 * 3_600_000);
      await h.jobs.drain();
    }
    expect(dead).toHaveLength(1);
    expect(loops).toBe(8); // attempt 1 before the loop, attempts 2–9 in it
    expect(dead[0]).toMatchObject({ id: deliveryId, status: "dead", attempts: 9, line: null, received_at: iso(receivedAt) });
    expect(dead[0].last_error).toContain("of storage");
    expect(await deliveries(id, "pending")).toEqual([]);
    expect((await noteOf(id)).plain_body).toBe("started\n");

    // Room again; one click replays it.
    await release();
    const replay = await h.request("POST", `/api/v1/notes/${id}/inbox/deliveries/${deliveryId}/replay`, { token });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ id: deliveryId, status: "pending" });
    await h.jobs.drain();

    const line = `${iso(receivedAt)} ${GITHUB_SUMMARY}`;
    expect((await noteOf(id)).plain_body).toBe(`started\n${line}\n`);
    const [done] = await deliveries(id, "delivered");
    expect(done).toMatchObject({ id: deliveryId, status: "delivered", line, last_error: null, delivered_at: iso(h.clock.now()) });

    const again = await h.request("POST", `/api/v1/notes/${id}/inbox/deliveries/${deliveryId}/replay`, { token });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe("conflict");
    const missing = await h.request("POST", `/api/v1/notes/${id}/inbox/deliveries/ibx_doesnotexist/replay`, { token });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe("not_found");
  });

  test("a payload to a full stream (retention reject) is dead at its first attempt with the reason; after retention drop_oldest a replay delivers it", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    // Fill it to the cap exactly, through the API.
    const have = (await noteOf(id)).byte_size as number;
    const block = "z".repeat(100 * KB - 1);
    let size = have;
    while (size + 100 * KB <= DEV_NOTE_CAP) {
      expect((await h.request("POST", `/api/v1/notes/${id}/append`, { token, body: { text: block } })).status).toBe(200);
      size += 100 * KB;
    }
    expect((await h.request("POST", `/api/v1/notes/${id}/append`, { token, body: { text: "f".repeat(DEV_NOTE_CAP - size - 1) } })).status).toBe(200);
    expect((await noteOf(id)).byte_size).toBe(DEV_NOTE_CAP);

    const receivedAt = h.clock.now();
    const { id: deliveryId } = await (await deliver(inbox.token, "deploy ok", TEXT)).json();
    await h.jobs.drain();
    const [dead] = await deliveries(id, "dead");
    expect(dead).toMatchObject({ id: deliveryId, status: "dead", attempts: 1, line: null });
    expect(dead.last_error).toContain("the stream is full");
    expect(dead.last_error).toContain("may hold 3 MB");
    expect(await deliveries(id, "pending")).toEqual([]);
    const job = await h.deps.db.select({ status: jobs.status }).from(jobs).where(eq(jobs.queue, "inbox")).limit(1);
    expect(job).toEqual([{ status: "failed" }]);

    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { retention: "drop_oldest" } } })).status).toBe(200);
    expect((await h.request("POST", `/api/v1/notes/${id}/inbox/deliveries/${deliveryId}/replay`, { token })).status).toBe(200);
    await h.jobs.drain();
    const [done] = await deliveries(id, "delivered");
    expect(done).toMatchObject({ id: deliveryId, line: `${iso(receivedAt)} deploy ok`, last_error: null });
    const note = await noteOf(id);
    expect(note.plain_body.endsWith(`${iso(receivedAt)} deploy ok\n`)).toBe(true);
    expect(note.byte_size).toBeLessThanOrEqual(DEV_NOTE_CAP);
  });

  test("a payload for a read-only account is dead at its first attempt with the reason", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const { id: deliveryId } = await (await deliver(inbox.token, "late", TEXT)).json();
    await h.deps.db.update(workspaces).set({ state: "read_only" }).where(eq(workspaces.id, acct.workspaceId));
    await h.jobs.drain();
    const [dead] = await deliveries(id, "dead");
    expect(dead).toMatchObject({ id: deliveryId, attempts: 1 });
    expect(dead.last_error).toContain("read-only");
  });

  test("a pending delivery cannot be replayed (409), nor one of another workspace's note (404)", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    await squeezeStorage(20);
    const { id: deliveryId } = await (await deliver(inbox.token, "waiting", { "content-type": "text/plain" })).json();
    await h.jobs.drain();
    const pending = await h.request("POST", `/api/v1/notes/${id}/inbox/deliveries/${deliveryId}/replay`, { token });
    expect(pending.status).toBe(409);
    expect((await errorOf(pending)).code).toBe("conflict");
    const other = await h.token(await h.account("dev"), ["read", "write"]);
    const foreign = await h.request("POST", `/api/v1/notes/${id}/inbox/deliveries/${deliveryId}/replay`, { token: other });
    expect(foreign.status).toBe(404);
  });
});

describe("outbound webhooks", () => {
  test("an inbox line appended to a stream with a webhook enqueues a webhook job too", async () => {
    // No real DNS or network: the name resolves to nothing, so the delivery fails fast.
    h.deps.resolve = async () => [];
    const id = await stream();
    const patch = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { webhook_url: "https://hooks.example.com/x" } } });
    expect(patch.status).toBe(200);
    expect(await patch.json()).toMatchObject({ webhook_url: "https://hooks.example.com/x", webhook_status: "enabled" });
    const inbox = await enableInbox(id);
    const receivedAt = h.clock.now();
    expect((await deliver(inbox.token, JSON.stringify(stripeEvent))).status).toBe(202);
    await h.jobs.drain();

    const line = `${iso(receivedAt)} Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 42.00 USD succeeded`;
    expect((await noteOf(id)).plain_body).toBe(`started\n${line}\n`);
    const webhookJobs = await jobsOf("webhook");
    expect(webhookJobs).toHaveLength(1);
    expect(webhookJobs[0]!.serial_key).toBe(id);
    expect(JSON.parse(webhookJobs[0]!.payload)).toMatchObject({ noteId: id, text: `${line}\n` });
  });
});

describe("inbox housekeeping", () => {
  test("delivered payloads go after 7 days and dead letters after 30, by the periodic tasks", async () => {
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/in.log/append", { token, body: { text: "x" } })).json();
    const { inbox_url } = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
    const path = new URL(inbox_url).pathname;
    await h.request("POST", path, { body: "hello", headers: { "content-type": "text/plain" } });
    await h.jobs.drain();
    expect(await deliveriesStored()).toBe(1);
    h.clock.advance(6 * 86_400_000);
    await runAllTasks(h.deps);
    expect(await deliveriesStored()).toBe(1);
    h.clock.advance(2 * 86_400_000);
    await runAllTasks(h.deps);
    expect(await deliveriesStored()).toBe(0);
  });

  test("a trashed stream's inbox answers 404 and stores nothing", async () => {
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/in.log/append", { token, body: { text: "x" } })).json();
    const { inbox_url } = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
    await h.deps.db.update(notes).set({ trashedAt: 1 }).where(eq(notes.id, id));
    const res = await h.request("POST", new URL(inbox_url).pathname, { body: "hello", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(404);
    expect(await deliveriesStored()).toBe(0);
  });
});

describe("inbox bodies count against the workspace's storage", () => {
  test("thirty 200 KB payloads move the workspace's storage by their size, as GET /account shows", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const before = await storageUsed();
    const noteBefore = (await noteOf(id)).byte_size as number;
    for (let i = 0; i < 30; i++) {
      const res = await deliver(inbox.token, `payload ${i} `.padEnd(200 * KB, "x"), TEXT);
      expect(res.status).toBe(202);
    }
    await h.jobs.drain();
    // The raw bodies, kept for replay, plus the thirty lines they became.
    const lines = ((await noteOf(id)).byte_size as number) - noteBefore;
    expect(lines).toBeGreaterThan(0);
    expect(await storageUsed()).toBe(before + 30 * 200 * KB + lines);
    const [sum] = await h.deps.db.select({ stored: sql<number>`sum(length(${inboxDeliveries.body}))`.mapWith(Number) }).from(inboxDeliveries);
    expect(sum!.stored).toBe(30 * 200 * KB);
  });

  test("a payload that would pass the workspace's storage cap is 403 cap_exceeded and stores nothing; one that fits is taken", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    await h.deps.db.update(workspaces).set({ storageUsed: DEV_STORAGE - 1000 }).where(eq(workspaces.id, acct.workspaceId));
    const res = await deliver(inbox.token, "y".repeat(1001), TEXT);
    expect(res.status).toBe(403);
    const err = await errorOf(res);
    expect(err.code).toBe("cap_exceeded");
    expect(err.details).toEqual({ cap: "storage", limit: DEV_STORAGE, used: DEV_STORAGE - 1000 });
    expect(await deliveriesStored()).toBe(0);
    expect(await h.deps.db.select({ n: count() }).from(jobs).where(eq(jobs.queue, "inbox"))).toEqual([{ n: 0 }]);
    expect(await storageUsed()).toBe(DEV_STORAGE - 1000);

    expect((await deliver(inbox.token, "y".repeat(1000), TEXT)).status).toBe(202);
    expect(await storageUsed()).toBe(DEV_STORAGE);
    expect(await deliveriesStored()).toBe(1);
  });

  test("pruning gives the bytes back: a delivered payload's after 7 days, a dead letter's after 30", async () => {
    const id = await stream();
    const realSize = (await noteOf(id)).byte_size as number;
    const inbox = await enableInbox(id);
    const before = await storageUsed();

    expect((await deliver(inbox.token, "d".repeat(10 * KB), TEXT)).status).toBe(202);
    await h.jobs.drain();
    const line = ((await noteOf(id)).byte_size as number) - realSize;
    expect(await storageUsed()).toBe(before + 10 * KB + line);

    // A second payload that never fits: retried, then dead-lettered, its body still counted.
    await h.deps.db.update(notes).set({ byteSize: DEV_NOTE_CAP }).where(eq(notes.id, id));
    expect((await deliver(inbox.token, "e".repeat(20 * KB), TEXT)).status).toBe(202);
    for (let i = 0; i < 20 && (await deliveries(id, "dead")).length === 0; i++) {
      await h.jobs.drain();
      h.clock.advance(7 * 3_600_000);
    }
    expect(await deliveries(id, "dead")).toHaveLength(1);
    await h.deps.db.update(notes).set({ byteSize: realSize + line }).where(eq(notes.id, id));
    expect(await storageUsed()).toBe(before + 10 * KB + 20 * KB + line);

    h.clock.advance(8 * 86_400_000);
    await runAllTasks(h.deps);
    expect(await deliveriesStored()).toBe(1);
    expect(await storageUsed()).toBe(before + 20 * KB + line);

    h.clock.advance(30 * 86_400_000);
    await runAllTasks(h.deps);
    expect(await deliveriesStored()).toBe(0);
    expect(await storageUsed()).toBe(before + line);
  });

  test("a deleted stream's inbox bodies stay counted in the trash and are given back with its own bytes at the purge", async () => {
    const before = await storageUsed();
    const id = await stream();
    const inbox = await enableInbox(id);
    expect((await deliver(inbox.token, "f".repeat(50 * KB), TEXT)).status).toBe(202);
    expect((await deliver(inbox.token, "g".repeat(30 * KB), TEXT)).status).toBe(202);
    await h.jobs.drain();
    const withBodies = await storageUsed();
    expect(withBodies).toBeGreaterThan(before + 80 * KB);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    expect(await storageUsed()).toBe(withBodies);
    h.clock.advance(30 * 86_400_000);
    await runTask(h.deps, "trash-purge");
    expect(await deliveriesStored()).toBe(0);
    expect(await storageUsed()).toBe(before);
  });
});

describe("the per-workspace inbox rate", () => {
  test("a workspace's inboxes take 600 payloads a minute between them: the 601st is 429 with Retry-After; other workspaces are unaffected", async () => {
    const inboxes: string[] = [];
    for (let i = 0; i < 6; i++) inboxes.push((await enableInbox(await stream(`in-${i}.log`))).token);
    // Five inboxes at 120 each: every one within its own limit, together at the workspace's.
    for (let n = 0; n < 600; n++) {
      const res = await deliver(inboxes[n % 5]!, `p${n}`, TEXT);
      if (res.status !== 202) throw new Error(`payload ${n} answered ${res.status}`);
    }
    const limited = await deliver(inboxes[5]!, "one too many", TEXT);
    expect(limited.status).toBe(429);
    const err = await errorOf(limited);
    expect(err.code).toBe("rate_limited");
    expect(err.message).toContain("600");
    expect(limited.headers.get("retry-after")).toBe("60");

    // Another workspace's inbox has its own budget.
    const other = await h.account("dev");
    const otherToken = await h.token(other, ["read", "write"]);
    const created = await h.request("POST", "/api/v1/notes/by-filename/theirs.log/append", { token: otherToken, body: { text: "x" } });
    const theirs = await (await h.request("POST", `/api/v1/notes/${(await created.json()).id}/inbox`, { token: otherToken })).json();
    expect((await deliver(theirs.token, "elsewhere", TEXT)).status).toBe(202);

    h.clock.advance(20_000);
    const still = await deliver(inboxes[5]!, "still too many", TEXT);
    expect(still.status).toBe(429);
    expect(still.headers.get("retry-after")).toBe("40");
    h.clock.advance(40_000);
    expect((await deliver(inboxes[5]!, "next minute", TEXT)).status).toBe(202);
    expect(await deliveriesStored()).toBe(600 + 1 + 1);
  });
});

describe("payloads that cannot be summarised as they are", () => {
  test("a payload nested 131,072 levels deep (the deepest 256 KB holds) is delivered as one line at the first attempt, and the next payload right after it", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    const deep = "[".repeat(INBOX_CAP / 2) + "]".repeat(INBOX_CAP / 2);
    const t1 = h.clock.now();
    expect((await deliver(inbox.token, deep)).status).toBe(202);
    h.clock.advance(1_000);
    const t2 = h.clock.now();
    expect((await deliver(inbox.token, "after the deep one", TEXT)).status).toBe(202);
    // No time passes: a retry would not be due, so both must succeed at their first attempt.
    await h.jobs.drain();
    expect((await noteOf(id)).plain_body).toBe(
      `started\n${iso(t1)} JSON payload nested deeper than 64 levels, ${INBOX_CAP} bytes\n${iso(t2)} after the deep one\n`,
    );
    const ds = await deliveries(id);
    expect(ds.map((d) => [d.status, d.attempts, d.last_error])).toEqual([
      ["delivered", 1, null],
      ["delivered", 1, null],
    ]);
  });

  test("a payload whose handling throws unexpectedly is dead-lettered at its first attempt with the error, and the inbox goes on", async () => {
    const id = await stream();
    const inbox = await enableInbox(id);
    // A full workspace holds the inbox's queue, so the second payload can be damaged before its turn.
    const release = await squeezeStorage(21);
    const t1 = h.clock.now();
    expect((await deliver(inbox.token, "first", TEXT)).status).toBe(202);
    const { id: broken } = await (await deliver(inbox.token, "second", TEXT)).json();
    await h.jobs.drain();
    // Its stored headers no longer parse: no retry can ever read them.
    await h.deps.db.update(inboxDeliveries).set({ headers: "{not json" }).where(eq(inboxDeliveries.id, broken));
    await release();
    h.clock.advance(10_000);
    const t3 = h.clock.now();
    expect((await deliver(inbox.token, "third", TEXT)).status).toBe(202);
    await h.jobs.drain();

    expect((await noteOf(id)).plain_body).toBe(`started\n${iso(t1)} first\n${iso(t3)} third\n`);
    const [dead] = await deliveries(id, "dead");
    expect(dead).toMatchObject({ id: broken, status: "dead", attempts: 1, line: null });
    expect(dead.last_error).toContain("could not turn the payload into a line");
    const job = (await jobsOf("inbox")).filter((j) => JSON.parse(j.payload).deliveryId === broken).map((j) => ({ status: j.status, attempts: j.attempts }));
    expect(job).toEqual([{ status: "failed", attempts: 1 }]);
  });
});
