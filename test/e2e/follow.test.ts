/**
 * Following a stream live (Server-Sent Events) and plain-text appends, against the compiled
 * binary over real HTTP: lines arrive in order, a reconnect with Last-Event-ID misses and repeats
 * nothing, the per-token and per-workspace limits hold, a quiet follow outlives the server's idle
 * timeout, and SIGTERM ends open follows and exits cleanly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { BUILD_TIMEOUT_MS, appendPath, buildBinary, cleanup, cliOk, onPostgres, provision, request, startServer, tempDir, withTimeout, type RunningServer } from "../helpers/binary";
import { sseReader, type SseReader } from "../helpers/sse";

beforeAll(() => void buildBinary(), BUILD_TIMEOUT_MS);
afterAll(() => cleanup());

const linesPath = (filename: string) => `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/lines`;

/** Opens a follow; the caller closes it (or the server ends it). */
async function follow(server: RunningServer, token: string, filename: string, headers: Record<string, string> = {}) {
  const ac = new AbortController();
  const res = await fetch(`${server.base}${linesPath(filename)}`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", ...headers },
    signal: ac.signal,
  });
  const sse: SseReader | null = res.ok ? sseReader(res.body!) : null;
  return { res, sse, close: () => ac.abort() };
}

const textOf = (e: { data: string }) => JSON.parse(e.data).text as string;

/**
 * Appends `texts` from `lanes` concurrent clients, each sending its next text once the previous
 * one is acknowledged; resolves with what each lane sent, in its order.
 */
async function appendAll(server: RunningServer, token: string, filename: string, texts: string[], lanes = 1): Promise<string[][]> {
  const queue = [...texts];
  return Promise.all(
    Array.from({ length: lanes }, async () => {
      const sent: string[] = [];
      for (let t = queue.shift(); t !== undefined; t = queue.shift()) {
        const r = await request(server.base, "POST", appendPath(filename), { token, json: { text: t } });
        if (r.status !== 200 && r.status !== 201) throw new Error(`append ${t}: ${r.status} ${JSON.stringify(r.body)}`);
        sent.push(t);
      }
      return sent;
    }),
  );
}

describe("following a stream over real HTTP", () => {
  let server: RunningServer;
  let token: string;
  beforeAll(async () => {
    const dataDir = tempDir("follow");
    token = provision(dataDir).token;
    // Unlimited: a thousand appends a minute are past Dev's rate limit.
    server = await startServer(dataDir, { NOTESTREAM_LIMIT_PROFILE: "unlimited" });
    expect((await request(server.base, "POST", appendPath("live.log"), { token, json: { text: "before" } })).status).toBe(201);
  }, 30_000);
  afterAll(async () => {
    await server?.stop("SIGKILL").catch(() => {});
  });

  test("1,000 appends arrive as 1,000 events in the stream's order, each once", async () => {
    const start = (await request(server.base, "GET", `${linesPath("live.log")}?last=1`, { token })).body.cursor as string;
    const f = await follow(server, token, "live.log");
    expect(f.res.status).toBe(200);
    expect(f.res.headers.get("content-type")).toStartWith("text/event-stream");
    const texts = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
    const lanes = await appendAll(server, token, "live.log", texts, 8);
    const events = await f.sse!.take(1000, 20_000);
    // The stream's own order (the lines after the one before them) is the order of the events.
    const stored = await request(server.base, "GET", `${linesPath("live.log")}?cursor=${start}&limit=1000`, { token });
    expect(events.map(textOf)).toEqual(stored.body.lines.map((l: { text: string }) => l.text));
    expect(events.map((e) => e.id)).toEqual(stored.body.lines.map((l: { cursor: string }) => l.cursor));
    expect(new Set(events.map(textOf))).toEqual(new Set(texts));
    // What each client sent after its previous answer came is later in the stream.
    const position = new Map(events.map((e, i) => [textOf(e), i]));
    for (const sent of lanes) expect(sent.map((t) => position.get(t)!)).toEqual(sent.map((t) => position.get(t)!).sort((x, y) => x - y));
    await Bun.sleep(200);
    expect(f.sse!.pending()).toEqual([]);
    f.close();
  }, 60_000);

  test("a reconnect with Last-Event-ID misses no line and repeats none", async () => {
    await appendAll(server, token, "resume.log", ["created"]);
    const a = await follow(server, token, "resume.log");
    await appendAll(server, token, "resume.log", Array.from({ length: 100 }, (_, i) => `r${i}`));
    const seen = await a.sse!.take(50);
    a.close();
    // Lines appended while nobody follows, and the rest of the first hundred, come on reconnect.
    await appendAll(server, token, "resume.log", Array.from({ length: 100 }, (_, i) => `r${100 + i}`));
    const b = await follow(server, token, "resume.log", { "last-event-id": seen[49]!.id! });
    expect(b.res.status).toBe(200);
    const rest = await b.sse!.take(150);
    expect([...seen, ...rest].map(textOf)).toEqual(Array.from({ length: 200 }, (_, i) => `r${i}`));
    await Bun.sleep(200);
    expect(b.sse!.pending()).toEqual([]);
    b.close();
  }, 30_000);

  test("the 11th open stream of a token is 429 with Retry-After", async () => {
    const open = [];
    for (let i = 0; i < 10; i++) {
      const f = await follow(server, token, "live.log");
      expect(f.res.status).toBe(200);
      open.push(f);
    }
    const eleventh = await follow(server, token, "live.log");
    expect(eleventh.res.status).toBe(429);
    expect(Number(eleventh.res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await eleventh.res.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    for (const f of open) f.close();
    // The server notices the hang-ups and frees the slots.
    const deadline = Date.now() + 5000;
    let again = await follow(server, token, "live.log");
    while (again.res.status === 429 && Date.now() < deadline) {
      await Bun.sleep(50);
      again = await follow(server, token, "live.log");
    }
    expect(again.res.status).toBe(200);
    again.close();
  }, 30_000);


  test("text/plain appends, as curl -d sends them", async () => {
    const post = (body: string, type: string) => fetch(`${server.base}${appendPath("curl.log")}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": type }, body });
    expect((await post("deploy ok", "text/plain")).status).toBe(201);
    expect((await post("déploiement terminé", "text/plain; charset=utf-8")).status).toBe(200);
    expect((await post("x", "application/x-www-form-urlencoded")).status).toBe(400);
    const page = await request(server.base, "GET", `${linesPath("curl.log")}?last=10`, { token });
    expect(page.body.lines.map((l: { text: string }) => l.text)).toEqual(["deploy ok", "déploiement terminé"]);
  });
});

// The idle timeout is the HTTP server's (src/server.ts), the same whichever database holds the
// stream, and the waits are the timeout itself: run once, on the SQLite pass.
describe.skipIf(onPostgres)("idle connections (NOTESTREAM_IDLE_TIMEOUT_SECONDS=1)", () => {
  let server: RunningServer;
  let token = "";
  beforeAll(async () => {
    const dataDir = tempDir("follow-idle");
    token = provision(dataDir).token;
    server = await startServer(dataDir, { NOTESTREAM_IDLE_TIMEOUT_SECONDS: "1" });
  }, 30_000);
  afterAll(async () => {
    await server?.stop("SIGKILL").catch(() => {});
  });

  /** Seconds from the answer to a request on a fresh keep-alive connection until the server closes it. */
  async function idleClose(): Promise<number> {
    const socket = connect(server.port, "127.0.0.1");
    let answeredAt = 0;
    const closed = new Promise<number>((resolve) => socket.on("close", () => resolve((Date.now() - answeredAt) / 1000)));
    socket.on("data", () => void (answeredAt ||= Date.now()));
    socket.write("GET /up HTTP/1.1\r\nHost: x\r\n\r\n");
    return withTimeout(closed, 15_000, "the server to close the idle connection");
  }

  test("an idle connection is closed after the idle timeout (checked every 4 s by the runtime), not before", async () => {
    const after = await idleClose();
    expect(after).toBeGreaterThanOrEqual(0.9);
    expect(after).toBeLessThan(6);
  }, 20_000);

  test("a quiet follow outlives the idle timeout", async () => {
    await appendAll(server, token, "quiet.log", ["created"]);
    const f = await follow(server, token, "quiet.log");
    await Bun.sleep(6_000);
    expect((await request(server.base, "POST", appendPath("quiet.log"), { token, json: { text: "still here" } })).status).toBe(200);
    expect((await f.sse!.take(1)).map(textOf)).toEqual(["still here"]);
    f.close();
  }, 30_000);
});

describe("live follows are capped per workspace", () => {
  let server: RunningServer;
  let tokens: string[];
  let other: string;
  beforeAll(async () => {
    const dataDir = tempDir("follow-workspace");
    const owner = provision(dataDir, "busy@example.com");
    const more = [1, 2].map(() => cliOk(dataDir, ["token", "create", "--email", owner.email, "--scope", "read"]).stdout.trim());
    tokens = [owner.token, ...more];
    other = provision(dataDir, "quiet@example.com").token;
    // A tenth of 30 is 3: the workspace cap is its floor, 10, one token's worth.
    server = await startServer(dataDir, { NOTESTREAM_SSE_MAX: "30" });
    for (const token of [owner.token, other]) expect((await request(server.base, "POST", appendPath("w.log"), { token, json: { text: "x" } })).status).toBe(201);
  }, 30_000);
  afterAll(async () => {
    await server?.stop("SIGKILL").catch(() => {});
  });

  test("one account's tokens are refused at 10 open follows with 429 and Retry-After; another account's still opens", async () => {
    const open = [];
    for (let i = 0; i < 10; i++) {
      const f = await follow(server, tokens[i % tokens.length]!, "w.log");
      expect(f.res.status).toBe(200);
      open.push(f);
    }
    // Each of the account's tokens holds at most four here, well under its own 10.
    for (const token of tokens) {
      const refused = await follow(server, token, "w.log");
      expect(refused.res.status).toBe(429);
      expect(Number(refused.res.headers.get("retry-after"))).toBeGreaterThan(0);
      const body = (await refused.res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("rate_limited");
      expect(body.error.message).toContain("workspace");
    }
    const elsewhere = await follow(server, other, "w.log");
    expect(elsewhere.res.status).toBe(200);
    elsewhere.close();
    // A follow that ends gives its workspace the slot back.
    open.pop()!.close();
    const deadline = Date.now() + 5000;
    let again = await follow(server, tokens[2]!, "w.log");
    while (again.res.status === 429 && Date.now() < deadline) {
      await Bun.sleep(50);
      again = await follow(server, tokens[2]!, "w.log");
    }
    expect(again.res.status).toBe(200);
    again.close();
    for (const f of open) f.close();
  }, 30_000);
});

test("SIGTERM with streams open ends them and exits 0 promptly", async () => {
  const dataDir = tempDir("follow-stop");
  const { token } = provision(dataDir);
  const server = await startServer(dataDir);
  expect((await request(server.base, "POST", appendPath("s.log"), { token, json: { text: "x" } })).status).toBe(201);
  const open = await Promise.all([follow(server, token, "s.log"), follow(server, token, "s.log"), follow(server, token, "s.log")]);
  for (const f of open) expect(f.res.status).toBe(200);
  const started = Date.now();
  expect(await server.stop("SIGTERM")).toBe(0);
  expect(Date.now() - started).toBeLessThan(5000);
  for (const f of open) await f.sse!.ended(2000);
  expect(server.logs.some((l) => l.includes('"stopped"'))).toBe(true);
}, 30_000);
