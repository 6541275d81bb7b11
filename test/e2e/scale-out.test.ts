// Two compiled binaries (`notestream serve`, each with its own data dir and port) on one
// PostgreSQL database, requests alternating between them (docs/SCALING.md, "Proof"): appends
// through both arrive once each with exact sizes; a token's rate limit and Idempotency-Key hold
// across both, and a token revoked (by the CLI, another process) is refused by both within a second; kill -9 of one under append load with a webhook loses no
// acknowledged append nor its delivery; two schedulers send one dead-man alert; an SSE follower
// on one sees appends made on the other, and so does an MCP session subscribed to the stream; an
// export built on one downloads from the other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { unzipSync } from "fflate";
import { MIGRATIONS_TABLE } from "../../src/db/pg/migrate";
import { migrationJournal } from "../../src/db/pg/migrations.generated";
import {
  type Answer,
  type RunningServer,
  FETCH_TIMEOUT_MS,
  append,
  buildBinary,
  cleanup,
  cli,
  getNote,
  request,
  startServer,
  tempDir,
} from "../helpers/binary";
import { parseMail } from "../helpers/mail";
import { freshDatabase, hasPostgres, type TestDatabase } from "../helpers/postgres";
import { receiver } from "../helpers/receiver";
import { sseReader } from "../helpers/sse";

const KNOWN = migrationJournal.entries.length;
const LEASE_SECONDS = 3;

const ok = (r: Answer) => r.status >= 200 && r.status < 300;
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Runs `fn` over `items` with at most `n` at a time; results in the order of `items`. */
async function pool<T, R>(items: T[], n: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Polls an async condition every `everyMs` until it holds; bounded in time. */
async function until(what: string, ms: number, check: () => Promise<boolean> | boolean, everyMs = 20): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

describe.skipIf(!hasPostgres)("two instances on one PostgreSQL (compiled binaries)", () => {
  let pg: TestDatabase;
  let dbUrl = "";
  let A: RunningServer;
  let B: RunningServer;
  let dataA = "";
  let dataB = "";
  let hook: ReturnType<typeof receiver>;
  /** Instance i % 2: requests alternate between A and B. */
  const at = (i: number) => (i % 2 === 0 ? A.base : B.base);

  /** A CLI command of the binary on the shared database; must succeed. */
  function pgCli(args: string[]): string {
    const r = cli(args, { NOTESTREAM_DATABASE_URL: dbUrl });
    if (r.code !== 0) throw new Error(`notestream ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  }

  /** A dev-plan account and one read,write token, made with the binary's CLI on PostgreSQL. */
  function provision(email: string): { email: string; token: string } {
    pgCli(["account", "create", "--email", email, "--plan", "dev"]);
    const token = pgCli(["token", "create", "--email", email, "--scope", "read,write"]).trim();
    expect(token).toMatch(/^nst_[A-Za-z0-9]{40}$/);
    return { email, token };
  }

  async function lines(base: string, token: string, filename: string): Promise<string[]> {
    const r = await request(base, "GET", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/lines?last=1000`, { token });
    expect(r.status).toBe(200);
    return (r.body.lines as { text: string }[]).map((l) => l.text);
  }

  beforeAll(async () => {
    buildBinary();
    hook = receiver();
    pg = await freshDatabase();
    const u = new URL(pg.url);
    u.searchParams.set("sslmode", "disable");
    dbUrl = u.toString();
    const env = {
      NOTESTREAM_DATABASE_URL: dbUrl,
      NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8",
      NOTESTREAM_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
      // The lease outlasts a delivery, so a live instance's jobs are never taken over.
      NOTESTREAM_WEBHOOK_TIMEOUT_MS: "2000",
      NOTESTREAM_MIN_INTERVAL_SECONDS: "1",
    };
    dataA = tempDir("data-a");
    dataB = tempDir("data-b");
    // Started together on an empty database: both migrate, under the advisory lock, once.
    [A, B] = await Promise.all([startServer(dataA, env), startServer(dataB, env)]);
    const [row] = await pg.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`);
    expect(row!.n).toBe(KNOWN);
    expect(A.port).not.toBe(B.port);
  }, 90_000);

  afterAll(async () => {
    hook?.stop();
    await cleanup();
    await pg?.drop();
  });

  test("1. appends through both instances, alternating and concurrent, arrive once each; byte_size and storage are exact sums", async () => {
    const { token } = provision("appends@example.com");
    const file = "both.log";
    const before = (await request(A.base, "GET", "/api/v1/account", { token })).body.usage.storage_bytes as number;
    const sent: string[] = [];
    // Alternating, one at a time (the first creates the stream).
    for (let i = 0; i < 40; i++) {
      const text = `alt ${i} ${"é".repeat(i % 5)}`;
      const r = await append(at(i), token, file, text);
      expect({ i, status: r.status }).toEqual({ i, status: i === 0 ? 201 : 200 });
      sent.push(text);
    }
    // Concurrently from both: 30 to each, all at once.
    const burst = Array.from({ length: 60 }, (_, i) => `con ${i} ${"x".repeat(i)}`);
    const answers = await Promise.all(burst.map((text, i) => append(at(i), token, file, text)));
    expect(answers.map((r) => r.status)).toEqual(burst.map(() => 200));
    sent.push(...burst);

    const onA = await lines(A.base, token, file);
    const onB = await lines(B.base, token, file);
    expect(onB).toEqual(onA);
    expect(onA.length).toBe(sent.length);
    expect([...onA].sort()).toEqual([...sent].sort());
    // The alternating ones in the order they were acknowledged.
    expect(onA.slice(0, 40)).toEqual(sent.slice(0, 40));

    const size = sent.reduce((n, t) => n + bytes(t) + 1, 0);
    for (const base of [A.base, B.base]) {
      const note = await getNote(base, token, file);
      expect(note.byte_size).toBe(size);
      expect(bytes(note.plain_body)).toBe(size);
      const account = await request(base, "GET", "/api/v1/account", { token });
      expect(account.body.usage.storage_bytes).toBe(before + size);
    }
  }, 20_000);

  test("2. a token's rate limit is counted across both: 310 appends alternating give 300 successes and 10 × 429", async () => {
    const { token } = provision("rate@example.com");
    // Windows are fixed minutes of the wall clock: do not straddle one.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 6_000) await Bun.sleep(left + 50);
    const first = await append(A.base, token, "rate.log", "r 0");
    expect(first.status).toBe(201);
    const rest = await pool(
      Array.from({ length: 309 }, (_, i) => i + 1),
      8,
      (i) => append(at(i), token, "rate.log", `r ${i}`),
    );
    const statuses = [first, ...rest].map((r) => r.status);
    const tally = statuses.reduce<Record<number, number>>((m, s) => ((m[s] = (m[s] ?? 0) + 1), m), {});
    expect(tally).toEqual({ 200: 299, 201: 1, 429: 10 });
    const refused = rest.filter((r) => r.status === 429);
    expect(new Set(refused.map((r) => r.body?.error?.code))).toEqual(new Set(["rate_limited"]));
    for (const r of refused) expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    // Refused ones on both instances (alternating, 309 sent after the first: both see the window full).
    expect((await lines(B.base, token, "rate.log")).length).toBe(300);
  }, 20_000);

  test("3. an Idempotency-Key used on A is replayed by B, and no second note exists", async () => {
    const { token } = provision("idem@example.com");
    const usage = async () => (await request(B.base, "GET", "/api/v1/account", { token })).body.usage.notes as number;
    const notesBefore = await usage();
    const key = `key-${crypto.randomUUID()}`;
    const body = { note: { title: "Created once", plain_body: "only one of me" } };
    const first = await request(A.base, "POST", "/api/v1/notes", { token, json: body, headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replay")).toBeNull();
    const again = await request(B.base, "POST", "/api/v1/notes", { token, json: body, headers: { "idempotency-key": key } });
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(await usage()).toBe(notesBefore + 1);
    const list = await request(A.base, "GET", "/api/v1/notes?limit=100", { token });
    expect(list.status).toBe(200);
    const titled = (list.body.notes ?? list.body).filter((n: { title: string }) => n.title === "Created once");
    expect(titled.map((n: { id: string }) => n.id)).toEqual([first.body.id]);
  }, 20_000);

  test("4. a token revoked on one is refused by the other within a second", async () => {
    const { email, token } = provision("revoke@example.com");
    // Used on both first, so each instance holds it in its token cache.
    for (const base of [A.base, B.base, A.base, B.base]) expect((await request(base, "GET", "/api/v1/account", { token })).status).toBe(200);
    const listed = pgCli(["token", "list", "--email", email]).trim().split("\n");
    expect(listed).toHaveLength(1);
    const id = listed[0]!.split("\t")[0]!;
    // The API has no route to revoke a token: the CLI revokes it in the database, as another
    // process, and both instances must hear of it.
    pgCli(["token", "revoke", "--id", id]);
    const revokedAt = Date.now();
    const refusedAt: Record<string, number> = {};
    await until("both instances to refuse the revoked token", 3_000, async () => {
      for (const [name, base] of [["A", A.base], ["B", B.base]] as const) {
        if (refusedAt[name]) continue;
        const r = await request(base, "GET", "/api/v1/account", { token });
        if (r.status === 401) refusedAt[name] = Date.now() - revokedAt;
        else expect(r.status).toBe(200);
      }
      return Object.keys(refusedAt).length === 2;
    });
    expect(refusedAt.A!).toBeLessThan(1_000);
    expect(refusedAt.B!).toBeLessThan(1_000);
    // And it stays refused on both.
    for (const base of [A.base, B.base]) expect((await request(base, "GET", "/api/v1/account", { token })).status).toBe(401);
  }, 20_000);

  test("6. two schedulers, one dead-man alert", async () => {
    const { token } = provision("quiet@example.com");
    const file = "quiet.log";
    const created = await append(A.base, token, file, "still here");
    expect(created.status).toBe(201);
    // The minimum interval (NOTESTREAM_MIN_INTERVAL_SECONDS=1 on both instances).
    const patched = await request(B.base, "PATCH", `/api/v1/notes/${created.body.id}`, { token, json: { note: { expected_interval_seconds: 1 } } });
    expect(patched.status).toBe(200);
    expect(patched.body.expected_interval_seconds).toBe(1);
    await until("the stream to be late", 8_000, async () => (await getNote(A.base, token, file)).deadman_status === "late", 100);
    const alerts = () =>
      [dataA, dataB].flatMap((dir) => {
        const outbox = join(dir, "outbox");
        if (!existsSync(outbox)) return [];
        return readdirSync(outbox)
          .map((f) => parseMail(readFileSync(join(outbox, f), "utf8"), { from: "", to: [] }))
          .filter((m) => m.subject === `[notestream] ${file} has gone quiet`)
          .map((m) => ({ dir, to: m.to, text: m.text }));
      });
    await until("the alert mail", 8_000, () => alerts().length > 0, 50);
    // Both schedulers tick every 2 s: two more ticks on each, and still one alert.
    await Bun.sleep(4_500);
    expect(alerts()).toHaveLength(1);
    expect(alerts()[0]!.text).toContain("still here");
    for (const base of [A.base, B.base]) expect((await getNote(base, token, file)).deadman_status).toBe("late");
  }, 30_000);

  test("7. an SSE follower on A sees appends made on B within a couple of seconds", async () => {
    const { token } = provision("follow@example.com");
    const created = await append(B.base, token, "live.log", "before");
    expect(created.status).toBe(201);
    const res = await fetch(`${A.base}/api/v1/notes/${created.body.id}/lines`, {
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = sseReader(res.body!);
    try {
      const texts = ["one from B", "two from B", "three from B"];
      const started = Date.now();
      for (const t of texts) expect((await append(B.base, token, "live.log", t)).status).toBe(200);
      const got = await events.take(3, 2_500);
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(got.map((e) => JSON.parse(e.data).text)).toEqual(texts);
      for (const e of got) expect(e.id).toBeTruthy();
    } finally {
      await events.close();
    }
  }, 20_000);

  test("7b. an MCP session on A subscribed to a stream is notified of an append made on B within 2 s", async () => {
    const { token } = provision("mcp-follow@example.com");
    expect((await append(B.base, token, "watched.log", "before")).status).toBe(201);
    const client = new Client({ name: "scale-out", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${A.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
      await client.subscribeResource({ uri: "notestream://streams/watched.log" });
      const started = Date.now();
      expect((await append(B.base, token, "watched.log", "from B")).status).toBe(200);
      await until("the update notification", 2_000, () => updates.length > 0);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(updates).toEqual(["notestream://streams/watched.log"]);
    } finally {
      await client.close();
    }
  }, 20_000);

  test("8. an export built on one is downloaded from the other", async () => {
    const { token } = provision("export@example.com");
    const text = "exported across instances";
    expect((await append(A.base, token, "export.log", text)).status).toBe(201);
    const queued = await request(A.base, "POST", "/api/v1/export", { token });
    expect(queued.status).toBe(202);
    const id = queued.body.id as string;
    let status: Answer | null = null;
    await until("the export to be ready", 15_000, async () => {
      status = await request(B.base, "GET", `/api/v1/export/${id}`, { token });
      expect(status.status).toBe(200);
      expect(status.body.status).not.toBe("failed");
      return status.body.status === "ready";
    }, 100);
    const url = new URL(status!.body.download_url as string);
    expect(url.pathname).toBe(`/api/v1/export/${id}/download`);
    // Downloaded from each instance: the same bytes, a zip holding the stream's text.
    const download = async (base: string) => {
      const res = await fetch(`${base}${url.pathname}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      expect(res.status).toBe(200);
      return new Uint8Array(await res.arrayBuffer());
    };
    const fromB = await download(B.base);
    const fromA = await download(A.base);
    expect(Buffer.from(fromB).equals(Buffer.from(fromA))).toBe(true);
    expect(fromB.length).toBe(status!.body.size_bytes);
    expect([...fromB.subarray(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
    const files = unzipSync(fromB);
    const texts = Object.values(files).map((f) => new TextDecoder().decode(f));
    expect(texts.some((t) => t.includes(text))).toBe(true);
  }, 30_000);

  // Last: it kills instance A.
  test("5. kill -9 of one instance under append load with a webhook: every acknowledged append stored and delivered, in order", async () => {
    const { token } = provision("kill@example.com");
    const file = "kill.log";
    const created = await append(B.base, token, file, "start");
    expect(created.status).toBe(201);
    const patched = await request(A.base, "PATCH", `/api/v1/notes/${created.body.id}`, { token, json: { note: { webhook_url: `${hook.url}/kill` } } });
    expect(patched.status).toBe(200);
    expect(patched.body.webhook_url).toBe(`${hook.url}/kill`);

    const sent = new Set<string>(["start"]);
    const acknowledged: string[] = ["start"];
    let killed = false;
    let ackedOnA = 0;
    // A: appends until it dies (kept under 300 in all: the token's rate limit).
    const loadA = pool(
      Array.from({ length: 120 }, (_, i) => `A ${i}`),
      3,
      async (text) => {
        if (killed) return;
        sent.add(text);
        try {
          const r = await append(A.base, token, file, text);
          if (ok(r)) {
            acknowledged.push(text);
            ackedOnA++;
          } else expect(r.status).toBe(200);
        } catch {
          // Refused or cut off by the dying instance: not acknowledged.
        }
      },
    );
    const loadB = pool(
      Array.from({ length: 140 }, (_, i) => `B ${i}`),
      3,
      async (text) => {
        sent.add(text);
        const r = await append(B.base, token, file, text);
        // (B's error log in the failure message: a 500 here has been a deadlock between the instances' batches.)
        expect({ text, status: r.status, log: r.status === 200 ? "" : B.stderr().slice(-600) }).toEqual({ text, status: 200, log: "" });
        acknowledged.push(text);
      },
    );
    await until("A to acknowledge 40 appends", 10_000, () => ackedOnA >= 40, 1);
    await A.stop("SIGKILL");
    killed = true;
    await Promise.all([loadA, loadB]);
    expect(ackedOnA).toBeGreaterThanOrEqual(40);

    // Every acknowledged append is in the stream once; nothing is there that was not sent.
    const stored = await lines(B.base, token, file);
    expect(new Set(stored).size).toBe(stored.length);
    const present = new Set(stored);
    expect(acknowledged.filter((t) => !present.has(t))).toEqual([]);
    expect(stored.filter((t) => !sent.has(t))).toEqual([]);

    // Every line stored after the webhook was set (all but "start") reaches the receiver: the
    // survivor takes over A's claimed jobs once their lease (3 s) ends.
    expect(stored[0]).toBe("start");
    const hooked = stored.slice(1);
    type Delivery = { id: string; text: string };
    const deliveries = (): Delivery[] =>
      hook.received
        .filter((r) => r.path === "/kill")
        .map((r) => JSON.parse(r.body) as { id: string; data: { text: string } })
        .map((b) => ({ id: b.id, text: b.data.text.replace(/\n$/, "") }));
    await until(`deliveries of all ${hooked.length} lines`, 30_000, () => {
      const got = new Set(deliveries().map((d) => d.text));
      return hooked.every((t) => got.has(t));
    }, 50);
    await Bun.sleep(300);
    const got = deliveries();

    // In append order: the first delivery of each line, in the order the lines are stored.
    const firstSeen: string[] = [];
    const seenIds = new Set<string>();
    for (const d of got) {
      if (seenIds.has(d.id)) continue;
      seenIds.add(d.id);
      firstSeen.push(d.text);
    }
    expect(firstSeen).toEqual(hooked);

    // Exactly once, except a delivery that was in flight on A when it died: A may have posted it
    // and been killed before recording the outcome, so the survivor, taking the job over after its
    // lease, posts it again. Such a duplicate has the same delivery id (the receiver can drop it),
    // comes right after the first one (one delivery at a time per note), and its job was claimed
    // more than once (attempts > 1 in the jobs table).
    const counts = new Map<string, number>();
    for (const d of got) counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
    const repeated = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const jobs = await pg.sql.unsafe<{ delivery: string; attempts: number; status: string }[]>(
      `SELECT payload::jsonb->>'deliveryId' AS delivery, attempts, status FROM jobs WHERE queue = 'webhook'`,
    );
    const claims = new Map(jobs.map((j) => [j.delivery, Number(j.attempts)]));
    for (const id of repeated) expect({ id, claims: claims.get(id) ?? 0 }).toEqual({ id, claims: Math.max(claims.get(id) ?? 0, 2, counts.get(id)!) });
    got.forEach((d, i) => {
      if (got.findIndex((e) => e.id === d.id) !== i) expect(got[i - 1]!.id).toBe(d.id);
    });
    // One job per stored line, each done.
    await until("every webhook job done", 5_000, async () => {
      const rows = await pg.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'webhook' AND status <> 'done'`);
      return rows[0]!.n === 0;
    }, 100);
    expect(jobs.length).toBe(hooked.length);
  }, 60_000);
});
