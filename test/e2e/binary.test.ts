/**
 * End-to-end tests of the real single-file executable: built once with `bun build --compile`,
 * run from an empty working directory with nothing beside it, driven through its own CLI and
 * over real HTTP, and stopped with SIGTERM and SIGKILL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import pkg from "../../package.json";
import {
  type Answer,
  BUILD_TIMEOUT_MS,
  FETCH_TIMEOUT_MS,
  append,
  appendPath,
  buildBinary,
  cleanup,
  cli,
  cliOk,
  notePath,
  onPostgres,
  provision,
  readStream,
  request,
  startServer,
  tempDir,
  waitFor,
  withTimeout,
} from "../helpers/binary";
import { receiver } from "../helpers/receiver";
import { smtpServer } from "../helpers/mail";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Lines of a stream body that ends with a newline. */
function linesOf(body: string): string[] {
  if (body === "") return [];
  expect(body.endsWith("\n")).toBe(true);
  return body.slice(0, -1).split("\n");
}

/** Every acknowledged text is in the note exactly once, and the note holds nothing that was not sent. */
function expectAcknowledgedPresent(lines: string[], acknowledged: string[], sent: Set<string>): void {
  expect(new Set(lines).size).toBe(lines.length);
  const present = new Set(lines);
  expect(acknowledged.filter((t) => !present.has(t))).toEqual([]);
  expect(lines.filter((l) => !sent.has(l))).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// Build and clean-up
// ---------------------------------------------------------------------------------------------

beforeAll(() => {
  const bin = buildBinary();
  // The same flags as `make build`: one file, nothing beside it.
  expect(readdirSync(dirname(bin))).toEqual(["notestream"]);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await cleanup();
});

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("CLI", () => {
  test("help, --version and migrate", () => {
    const help = cli(["help"]);
    expect(help.code).toBe(0);
    for (const cmd of ["serve", "migrate", "account create", "team create", "team add", "token create"]) {
      expect(help.stdout).toContain(cmd);
    }

    const version = cli(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`${pkg.version}\n`);

    // A data dir that does not exist yet, then the same, already migrated.
    const dataDir = join(tempDir("data"), "nested", "data");
    const first = cli(["migrate"], { NOTESTREAM_DATA_DIR: dataDir });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("up to date");
    // SQLite's file under the data dir; on PostgreSQL the data dir's database (made from the migrated template) has nothing to apply.
    if (onPostgres) expect(first.stderr).toContain("nothing to apply");
    else expect(existsSync(join(dataDir, "notestream.db"))).toBe(true);
    const again = cli(["migrate"], { NOTESTREAM_DATA_DIR: dataDir });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("up to date");
    // Nothing is written into the working directory when NOTESTREAM_DATA_DIR is set.
    expect(readdirSync(again.cwd)).toEqual([]);
  });

  test("account create and token create print one machine-readable line on stdout", () => {
    const dataDir = tempDir("data");
    const account = cli(["account", "create", "--email", "cli@example.com", "--plan", "dev"], { NOTESTREAM_DATA_DIR: dataDir });
    expect(account.code).toBe(0);
    expect(account.stdout).toMatch(/^acct_[A-Za-z0-9]+\n$/);
    expect(account.stderr).toContain("cli@example.com");
    expect(readdirSync(account.cwd)).toEqual([]);

    const token = cli(["token", "create", "--email", "cli@example.com", "--scope", "read,write"], { NOTESTREAM_DATA_DIR: dataDir });
    expect(token.code).toBe(0);
    expect(token.stdout).toMatch(/^nst_[A-Za-z0-9]{40}\n$/);
    expect(token.stdout.split("\n")).toHaveLength(2); // exactly one line
    // The secret goes to stdout only.
    expect(token.stderr).not.toContain(token.stdout.trim());
    expect(token.stderr).toContain("shown only this once");
  });

  test("bad arguments exit non-zero with a clear message on stderr and nothing on stdout", () => {
    const dataDir = tempDir("data");
    const env = { NOTESTREAM_DATA_DIR: dataDir };
    cliOk(dataDir, ["account", "create", "--email", "dev@example.com", "--plan", "dev"]);
    cliOk(dataDir, ["account", "create", "--email", "free@example.com", "--plan", "free"]);

    const cases: { args: string[]; code?: number; message: RegExp }[] = [
      { args: ["frobnicate"], code: 2, message: /unknown command "frobnicate"/ },
      { args: ["account", "frobnicate"], code: 2, message: /unknown command "account frobnicate"/ },
      { args: ["account", "create", "--email", "x@example.com"], code: 2, message: /--plan is required/ },
      { args: ["account", "create", "--email", "x@example.com", "--plan", "bogus"], code: 2, message: /--plan must be one of .*dev/ },
      { args: ["token", "create", "--email", "nobody@example.com", "--scope", "read"], code: 1, message: /no account with e-mail nobody@example\.com/ },
      { args: ["token", "create", "--email", "dev@example.com", "--scope", "read,delete"], code: 2, message: /unknown scope "delete"/ },
      { args: ["token", "create", "--email", "free@example.com", "--scope", "read"], code: 1, message: /free plan has no API access/ },
      { args: ["token", "create", "--email", "dev@example.com", "--scope", "read", "--expires-in-days", "400"], code: 2, message: /--expires-in-days must be a whole number from 1 to 365/ },
      { args: ["token", "create", "--email", "dev@example.com", "--scope", "read", "--name", "n".repeat(81)], code: 2, message: /--name must be at most 80 characters/ },
    ];
    for (const c of cases) {
      const r = cli(c.args, env);
      const label = `notestream ${c.args.join(" ")} -> exit ${r.code}, stderr: ${r.stderr}`;
      expect(r.code, label).not.toBe(0);
      if (c.code !== undefined) expect(r.code, label).toBe(c.code);
      expect(r.stderr, label).toMatch(/^notestream: /);
      expect(r.stderr, label).toMatch(c.message);
      expect(r.stdout, label).toBe("");
    }
  });
});

describe("serve over HTTP", () => {
  test("appends and reads back over real HTTP, one JSON log line per request, never the token", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const server = await startServer(dataDir);
    try {
      const listening = JSON.parse(server.logs[0]!);
      expect(listening).toMatchObject({ level: "info", msg: "listening", port: server.port, data_dir: dataDir });
      expect(server.port).toBeGreaterThan(0);

      const requestIds: { method: string; path: string; status: number; id: string }[] = [];
      const track = (method: string, path: string, r: Answer) => {
        const id = r.headers.get("x-request-id");
        expect(id).toBeTruthy();
        requestIds.push({ method, path, status: r.status, id: id! });
        return r;
      };

      const up = track("GET", "/up", await request(server.base, "GET", "/up"));
      expect(up.status).toBe(200);
      expect(up.body).toEqual({ ok: true });

      const first = track("POST", appendPath("deploys.log"), await append(server.base, token, "deploys.log", "deploy 1"));
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ filename: "deploys.log", created: true, byte_size: 9 });

      const second = track("POST", appendPath("deploys.log"), await append(server.base, token, "deploys.log", "deploy 2"));
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ id: first.body.id, filename: "deploys.log", created: false, byte_size: 18 });

      // A client-chosen request id is echoed; a token in the query string is not logged either.
      const read = track(
        "GET",
        notePath("deploys.log"),
        await request(server.base, "GET", `${notePath("deploys.log")}?access_token=${token}`, { token, headers: { "x-request-id": "e2e-read-1" } }),
      );
      expect(read.status).toBe(200);
      expect(read.headers.get("x-request-id")).toBe("e2e-read-1");
      expect(read.body).toMatchObject({ id: first.body.id, kind: "stream", filename: "deploys.log", plain_body: "deploy 1\ndeploy 2\n" });

      const denied = track("POST", appendPath("deploys.log"), await append(server.base, `${token}x`, "deploys.log", "deploy 3"));
      expect(denied.status).toBe(401);
      expect(denied.body.error.code).toBe("unauthorized");

      // Request lines are written just after each answer; wait for all of them before stopping
      // (see the note on shutdown at the top of the file).
      await waitFor(
        () => requestIds.every((r) => server.logs.some((l) => l.includes(`"request_id":"${r.id}"`))),
        5_000,
        `a request log line for each of ${requestIds.length} requests`,
      );
      expect(await server.stop("SIGTERM")).toBe(0);

      const stdout = server.logs.join("\n");
      expect(stdout).not.toContain(token);
      expect(server.stderr()).not.toContain(token);

      const parsed = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>); // every stdout line is JSON
      const requestLines = parsed.filter((l) => l.msg === "request");
      expect(requestLines).toHaveLength(requestIds.length);
      for (const want of requestIds) {
        const lines = requestLines.filter((l) => l.request_id === want.id);
        expect(lines).toHaveLength(1);
        const line = lines[0]!;
        expect(line).toMatchObject({ level: "info", method: want.method, path: want.path, status: want.status });
        expect(typeof line.duration_ms).toBe("number");
        expect(typeof line.time).toBe("string");
      }
      expect(parsed.map((l) => l.msg)).toEqual(["listening", ...requestIds.map(() => "request"), "shutting down", "stopped"]);
    } finally {
      await server.stop("SIGKILL").catch(() => {});
    }
  });

  test("SIGTERM under load: exits 0 and every acknowledged append survives", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const filename = "sigterm.log";
    const server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
    const N = 200;
    const texts = Array.from({ length: N }, (_, i) => `term-${i}`);
    let outcomes: { text: string; status: number; error?: string }[] = [];
    try {
      const fire = (text: string) =>
        append(server.base, token, filename, text).then(
          (r) => ({ text, status: r.status }),
          (e: unknown) => ({ text, status: 0, error: String(e) }),
        );
      // Half the appends go out at once; SIGTERM follows the first answer, while the rest of that
      // half is in flight; the other half goes out in small waves after the signal.
      const pending = texts.slice(0, N / 2).map(fire);
      await withTimeout(Promise.race(pending), FETCH_TIMEOUT_MS, "the first append");
      server.proc.kill("SIGTERM");
      for (let i = N / 2; i < N; i += 10) {
        pending.push(...texts.slice(i, i + 10).map(fire));
        await Bun.sleep(1);
      }
      outcomes = await withTimeout(Promise.all(pending), FETCH_TIMEOUT_MS + 5_000, "all appends to settle");
      expect(await server.stop("SIGTERM")).toBe(0);
      expect(server.logs.map((l) => JSON.parse(l).msg)).toEqual(["listening", "shutting down", "stopped"]);
    } finally {
      await server.stop("SIGKILL").catch(() => {});
    }

    const acknowledged = outcomes.filter((o) => o.status >= 200 && o.status < 300).map((o) => o.text);
    const answeredBadly = outcomes.filter((o) => o.status !== 0 && (o.status < 200 || o.status >= 300));
    console.log(
      `SIGTERM: ${acknowledged.length}/${N} acknowledged, ${outcomes.filter((o) => o.status === 0).length} connection errors, ` +
        `${answeredBadly.length} other answers ${JSON.stringify([...new Set(answeredBadly.map((o) => o.status))])}`,
    );
    expect(acknowledged.length).toBeGreaterThan(0);
    // Graceful shutdown finishes what it accepted: an answer is a success, or there is no answer at all.
    expect(answeredBadly).toEqual([]);

    const again = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
    try {
      const lines = linesOf(await readStream(again.base, token, filename));
      expectAcknowledgedPresent(lines, acknowledged, new Set(texts));
      expect(lines.length).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await again.stop("SIGKILL").catch(() => {});
    }
  });

  test("kill -9 mid-flight with NOTESTREAM_SYNCHRONOUS=FULL loses no acknowledged append", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const filename = "durable.log";
    // Unlimited: the Dev plan's 300 appends a minute would otherwise cap what the test can check.
    const env = { NOTESTREAM_SYNCHRONOUS: "FULL", NOTESTREAM_LOG_REQUESTS: "false", NOTESTREAM_LIMIT_PROFILE: "unlimited" };
    const server = await startServer(dataDir, env);

    const CONCURRENCY = 16;
    const MAX_APPENDS = 20_000;
    const RUN_MS = 1_000;
    const sent = new Set<string>();
    const acknowledged: string[] = [];
    let next = 0;
    let killed = false;
    const hardStop = Date.now() + RUN_MS + FETCH_TIMEOUT_MS;
    const worker = async () => {
      while (!killed && next < MAX_APPENDS && Date.now() < hardStop) {
        const text = `line-${next++}`;
        sent.add(text);
        try {
          const r = await append(server.base, token, filename, text);
          if (r.status >= 200 && r.status < 300) acknowledged.push(text);
        } catch {
          // Connection errors once the process is gone are expected.
        }
      }
    };
    try {
      const workers = Array.from({ length: CONCURRENCY }, worker);
      await Bun.sleep(RUN_MS);
      server.proc.kill("SIGKILL");
      killed = true;
      await withTimeout(Promise.all(workers), FETCH_TIMEOUT_MS + 5_000, "the append workers to stop");
      await server.stop("SIGKILL");
      expect(server.proc.signalCode).toBe("SIGKILL");
    } finally {
      await server.stop("SIGKILL").catch(() => {});
    }
    console.log(`kill -9: ${acknowledged.length}/${sent.size} appends acknowledged before the kill`);
    expect(acknowledged.length).toBeGreaterThan(10);

    const again = await startServer(dataDir, env);
    try {
      const lines = linesOf(await readStream(again.base, token, filename));
      expectAcknowledgedPresent(lines, acknowledged, sent);
      // At most the requests in flight at the moment of the kill may have committed unanswered.
      expect(lines.length - acknowledged.length).toBeLessThanOrEqual(CONCURRENCY);
    } finally {
      await again.stop("SIGKILL").catch(() => {});
    }
  });

  test("a token revoked from the command line stops working on the running server, though the server had it cached", async () => {
    const dataDir = tempDir("data");
    const { email, token } = provision(dataDir);
    const server = await startServer(dataDir);
    try {
      // Used first, so the server holds it in its token cache.
      for (let i = 0; i < 3; i++) expect((await append(server.base, token, "cached.log", `line ${i}`)).status).toBe(i === 0 ? 201 : 200);
      const id = cliOk(dataDir, ["token", "list", "--email", email]).stdout.split("\t")[0]!;
      expect(cliOk(dataDir, ["token", "revoke", "--id", id]).stdout.trim()).toBe(id);
      // Another process's commit is noticed within 50 ms (SQLite's data_version); allow a little more.
      await Bun.sleep(100);
      const after = await append(server.base, token, "cached.log", "after revocation");
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe("unauthorized");
      // Nothing of the refused append was written; a new token of the account reads the three lines.
      const fresh = cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read"]).stdout.trim();
      expect(linesOf(await readStream(server.base, fresh, "cached.log"))).toEqual(["line 0", "line 1", "line 2"]);
    } finally {
      await server.stop("SIGTERM");
    }
  });

  test("guard rails over real HTTP: oversized bodies (Content-Length and chunked) are 413, /up/deep is healthy, headers are there", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const server = await startServer(dataDir);
    try {
      const url = `${server.base}/api/v1/notes/by-filename/big/append`;
      const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const big = JSON.stringify({ text: "x".repeat(4 * 1024 * 1024) });
      const sized = await withTimeout(fetch(url, { method: "POST", headers: auth, body: big }), FETCH_TIMEOUT_MS, "a 413");
      expect(sized.status).toBe(413);
      expect(((await sized.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");

      // A streamed body has no Content-Length: the server must count as it reads.
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent === 0) c.enqueue(new TextEncoder().encode('{"text":"'));
          if (sent > 5 * 1024 * 1024) return c.close();
          c.enqueue(new Uint8Array(256 * 1024).fill(120));
          sent += 256 * 1024;
        },
      });
      const chunked = await withTimeout(
        fetch(url, { method: "POST", headers: auth, body: stream, duplex: "half" } as RequestInit),
        FETCH_TIMEOUT_MS,
        "a chunked 413",
      );
      expect(chunked.status).toBe(413);

      const read = await fetch(`${server.base}/api/v1/notes/by-filename/big`, { headers: { authorization: `Bearer ${token}` } });
      expect(read.status).toBe(404);
      for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-bucket"]) {
        expect(read.headers.get(h)).not.toBeNull();
      }

      const deep = await fetch(`${server.base}/up/deep`);
      expect(deep.status).toBe(200);
      expect(await deep.json()).toMatchObject({ ok: true, checks: { database: { status: "ok" }, scheduler: { status: "ok" } } });
    } finally {
      await server.stop("SIGTERM");
    }
  });

  test("a JSON body nested 100,000 levels deep is refused at once, with or without a token, while /up keeps answering", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const server = await startServer(dataDir);
    try {
      const hostile = `{"note":{"title":"x","folder_id":${"[".repeat(100_000)}"x"${"]".repeat(100_000)}}}`;
      const post = (headers: Record<string, string>) =>
        withTimeout(fetch(`${server.base}/api/v1/notes`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: hostile }), FETCH_TIMEOUT_MS, "a refusal");
      // Hostile requests in flight, and a health check beside them: it must not wait behind them.
      const started = performance.now();
      const attacks = [post({}), post({ authorization: `Bearer ${token}` }), post({}), post({ authorization: `Bearer ${token}` })];
      const up = await withTimeout(fetch(`${server.base}/up`), FETCH_TIMEOUT_MS, "/up");
      const upMs = performance.now() - started;
      expect(up.status).toBe(200);
      const answers = await Promise.all(attacks);
      expect(answers.map((a) => a.status)).toEqual([401, 400, 401, 400]);
      expect(((await answers[1]!.json()) as { error: { code: string } }).error.code).toBe("bad_request");
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(upMs).toBeLessThan(3_000);
      expect(server.stderr()).not.toContain("Maximum call stack");
    } finally {
      await server.stop("SIGTERM");
    }
  });

  test("kill -9 with a webhook and an inbox: every acknowledged append is delivered after restart, every 202'd payload lands", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const hook = receiver();
    const env = {
      NOTESTREAM_LOG_REQUESTS: "false",
      NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8",
      NOTESTREAM_LIMIT_PROFILE: "unlimited",
      // SQLite's restarted server takes the dead one's running jobs back at start; on PostgreSQL (other
      // instances may be alive) they come back when their lease ends (docs/SCALING.md): a short one here.
      ...(onPostgres ? { NOTESTREAM_JOB_LEASE_SECONDS: "3", NOTESTREAM_WEBHOOK_TIMEOUT_MS: "2000" } : {}),
    };
    const server = await startServer(dataDir, env);
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const acknowledged: string[] = [];
    const inboxAcked: string[] = [];
    let killed = false;
    try {
      const first = (await append(server.base, token, "hooked.log", "seed")).body as { id: string };
      const patched = await fetch(`${server.base}/api/v1/notes/${first.id}`, {
        method: "PATCH",
        headers: auth,
        body: JSON.stringify({ note: { webhook_url: `${hook.url}/hook` } }),
      });
      expect(patched.status).toBe(200);
      const inbox = (await (await fetch(`${server.base}/api/v1/notes/${first.id}/inbox`, { method: "POST", headers: auth })).json()) as { inbox_url: string };
      const inboxUrl = inbox.inbox_url.replace(/^https?:\/\/[^/]+/, server.base);

      let n = 0;
      const hardStop = Date.now() + 5_000;
      const appender = async () => {
        while (!killed && Date.now() < hardStop && n < 5_000) {
          const text = `w-${n++}`;
          try {
            const r = await append(server.base, token, "hooked.log", text);
            if (r.status < 300) acknowledged.push(text);
          } catch {}
        }
      };
      const poster = async () => {
        while (!killed && Date.now() < hardStop && n < 5_000) {
          const text = `inbox-${n++}`;
          try {
            const r = await fetch(inboxUrl, { method: "POST", headers: { "content-type": "text/plain" }, body: text });
            if (r.status === 202) inboxAcked.push(text);
          } catch {}
        }
      };
      const workers = [...Array.from({ length: 6 }, appender), poster(), poster()];
      await Bun.sleep(600);
      server.proc.kill("SIGKILL");
      killed = true;
      await withTimeout(Promise.all(workers), FETCH_TIMEOUT_MS + 5_000, "the workers to stop");
      console.log(`kill -9 with webhook: ${acknowledged.length} appends and ${inboxAcked.length} inbox payloads acknowledged, ${hook.received.length} deliveries before the kill`);
    } finally {
      await server.stop("SIGKILL").catch(() => {});
    }
    expect(acknowledged.length).toBeGreaterThan(10);
    expect(inboxAcked.length).toBeGreaterThan(2);

    const again = await startServer(dataDir, env);
    try {
      // Deliveries resume from the queue; wait (bounded) until every acknowledged line has arrived.
      // Inbox lines arrive as "<timestamp> <payload>", so compare without the timestamp.
      const deliveredTexts = () => hook.received.map((r) => (JSON.parse(r.body) as { data: { text: string } }).data.text.trimEnd().replace(/^\S+Z /, ""));
      await waitFor(() => {
        const got = new Set(deliveredTexts());
        return [...acknowledged, ...inboxAcked].every((t) => got.has(t));
      }, 30_000, "every acknowledged append and inbox payload to be delivered");
      const stored = linesOf(await readStream(again.base, token, "hooked.log")).map((l) => l.replace(/^\S+Z /, ""));
      for (const t of inboxAcked) expect(stored).toContain(t);
      // In append order per note: first deliveries come in the order the lines were stored.
      const position = new Map(stored.map((l, i) => [l, i]));
      const firstDeliveries = [...new Set(deliveredTexts())].map((t) => position.get(t) ?? -1).filter((i) => i >= 0);
      expect(firstDeliveries).toEqual([...firstDeliveries].sort((x, y) => x - y));
    } finally {
      await again.stop("SIGKILL").catch(() => {});
      hook.stop();
    }
  }, 60_000);

  test("dead-man's switch on the running binary: the scheduler alerts within seconds of the deadline, once", async () => {
    const smtp = await smtpServer();
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const server = await startServer(dataDir, { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_MIN_INTERVAL_SECONDS: "1", NOTESTREAM_LOG_REQUESTS: "false" });
    try {
      const first = (await append(server.base, token, "heartbeat.log", "alive")).body as { id: string };
      const armed = await request(server.base, "PATCH", `/api/v1/notes/${first.id}`, { token, json: { note: { expected_interval_seconds: 2 } } });
      expect(armed.status).toBe(200);
      const armedAt = Date.now();
      await smtp.waitFor(1, 10_000);
      const took = Date.now() - armedAt;
      console.log(`dead-man alert arrived ${took} ms after arming a 2 s switch`);
      expect(took).toBeLessThan(2_000 + 5_000);
      expect(smtp.mails[0]!.subject).toBe("[notestream] heartbeat.log has gone quiet");
      expect(smtp.mails[0]!.to).toEqual(["ops@example.com"]);
      // No second alert for the same silence.
      await Bun.sleep(3_000);
      expect(smtp.mails).toHaveLength(1);
    } finally {
      await server.stop("SIGTERM").catch(() => {});
      await smtp.stop();
    }
  }, 30_000);

  test("a cron schedule on the running binary: late one grace after a missed time, one alert, and an append re-arms it", async () => {
    const smtp = await smtpServer();
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    const server = await startServer(dataDir, { NOTESTREAM_SMTP_URL: smtp.url, NOTESTREAM_MIN_INTERVAL_SECONDS: "1", NOTESTREAM_LOG_REQUESTS: "false" });
    try {
      const first = (await append(server.base, token, "nightly.log", "ran")).body as { id: string };
      const armed = await request(server.base, "PATCH", `/api/v1/notes/${first.id}`, {
        token,
        json: { note: { schedule: "*/2 * * * * *", timezone: "Asia/Kolkata", grace_seconds: 1 } },
      });
      expect(armed.status).toBe(200);
      const note = armed.body as { due_at: string; schedule: string; expected_interval_seconds: null };
      expect(note).toMatchObject({ schedule: "*/2 * * * * *", expected_interval_seconds: null });
      expect(Date.parse(note.due_at)).toBeLessThanOrEqual(Date.now() + 3_000);
      await smtp.waitFor(1, 10_000);
      expect(smtp.mails[0]!.subject).toBe("[notestream] nightly.log has gone quiet");
      expect(smtp.mails[0]!.text).toContain("expected on the schedule");
      await Bun.sleep(2_500);
      expect(smtp.mails).toHaveLength(1);
      await append(server.base, token, "nightly.log", "ran again");
      await smtp.waitFor(2, 10_000);
      expect(smtp.mails[1]!.subject).toBe("[notestream] nightly.log is writing again");
      const after = (await request(server.base, "GET", `/api/v1/notes/${first.id}`, { token })).body as { due_at: string };
      expect(Date.parse(after.due_at)).toBeGreaterThan(Date.now() - 1_000);
    } finally {
      await server.stop("SIGTERM").catch(() => {});
      await smtp.stop();
    }
  }, 30_000);
});
