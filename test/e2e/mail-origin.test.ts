/**
 * Links in mail name the configured origin (NOTESTREAM_BASE_URL, unset: http://localhost:<port>,
 * the port the server got when told 0),
 * never one a request chose, on the compiled binary: an export asked for through a proxy that
 * writes X-Forwarded-* while the client sends its own `Forwarded`, and an export and a test alert
 * asked for with a forged `Host`, written byte for byte on a socket.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { BUILD_TIMEOUT_MS, appendPath, buildBinary, cleanup, cliOk, request, startServer, tempDir, withTimeout, type RunningServer } from "../helpers/binary";
import { parseMail, type ReceivedMail } from "../helpers/mail";

beforeAll(() => void buildBinary(), BUILD_TIMEOUT_MS);
afterAll(() => cleanup());

const PASSWORD = "Mail-origin-9";

/** A dev account with a password, for the pages, and an API token. */
function account(dataDir: string, email: string): { email: string; token: string } {
  cliOk(dataDir, ["account", "create", "--email", email, "--plan", "dev", "--password", PASSWORD]);
  return { email, token: cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read,write"]).stdout.trim() };
}

/** The mail in the server's outbox (no SMTP configured) whose subject matches, once it is there. */
async function mailTo(dataDir: string, subject: RegExp): Promise<ReceivedMail> {
  const outbox = join(dataDir, "outbox");
  const deadline = Date.now() + 10_000;
  for (;;) {
    const mails = existsSync(outbox) ? readdirSync(outbox).map((f) => parseMail(readFileSync(join(outbox, f), "utf8"), { from: "", to: [] })) : [];
    const found = mails.find((m) => subject.test(m.subject));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no mail matching ${subject} in ${outbox}; there: ${mails.map((m) => m.subject).join(", ")}`);
    await Bun.sleep(50);
  }
}

/** Every link a mail holds. */
const linksIn = (mail: ReceivedMail) => mail.text.match(/https?:\/\/[^\s)>"]+/g) ?? [];

/** One HTTP/1.1 request written as is (Host included: fetch would write its own), on a fresh connection. */
async function raw(port: number, method: string, path: string, headers: Record<string, string>, body = ""): Promise<{ status: number; headers: string; body: string }> {
  const socket = connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("close", () => resolve());
    socket.on("error", reject);
  });
  const head = Object.entries({ ...headers, "Content-Length": String(Buffer.byteLength(body)), Connection: "close" }).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`${method} ${path} HTTP/1.1\r\n${head.join("")}\r\n${body}`);
  await withTimeout(done, 10_000, "the answer");
  const text = Buffer.concat(chunks).toString("utf8");
  const split = text.indexOf("\r\n\r\n");
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: text.slice(split + 4) };
}

const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]!).join("; ");
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

/** Signs in through the sign-in form, as a browser would; the session's cookie. */
async function signIn(base: string, email: string): Promise<string> {
  const form = await fetch(`${base}/signin`);
  const res = await fetch(`${base}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: cookiesOf(form), origin: base, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrfOf(await form.text()), email, password: PASSWORD, next: "" }),
  });
  expect(res.status).toBe(303);
  const session = res.headers.getSetCookie().find((c) => c.startsWith("ns_session="));
  expect(session).toBeDefined();
  return session!.split(";")[0]!;
}

/**
 * A server on a data dir of its own with one account, started before a describe's tests and
 * stopped after. It is given port 0 (startServer's), so the links must name the port it got.
 */
function served(label: string, email: string, env: Record<string, string>) {
  const it = {} as { server: RunningServer; dataDir: string; port: number; owner: { email: string; token: string } };
  beforeAll(async () => {
    it.dataDir = tempDir(label);
    it.owner = account(it.dataDir, email);
    it.server = await startServer(it.dataDir, env);
    it.port = Number(new URL(it.server.base).port);
  }, 30_000);
  afterAll(async () => {
    await it.server?.stop("SIGKILL").catch(() => {});
  });
  return it;
}

/** The export-ready mail's links, each checked to name the configured origin and never evil.test. */
async function exportMailLinks(dataDir: string, port: number): Promise<string[]> {
  const mail = await mailTo(dataDir, /your export is ready/);
  expect(mail.text).not.toContain("evil.test");
  const links = linksIn(mail);
  expect(links.length).toBe(2);
  for (const link of links) expect(link).toStartWith(`http://localhost:${port}/`);
  return links;
}

describe("behind a proxy that writes X-Forwarded-*, without a base URL", () => {
  const it = served("mail-proxy", "owner@example.com", { NOTESTREAM_TRUST_PROXY: "1" });

  test("a client's own Forwarded header, passed through beside the proxy's, reaches neither the export mail nor the answer", async () => {
    const { server, dataDir, port, owner } = it;
    // What a proxy that writes X-Forwarded-* (Caddy, Traefik, nginx) sends on: its own, and the client's Forwarded as it came.
    const headers = { forwarded: "host=evil.test;proto=https", "x-forwarded-host": "notes.example.com", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9" };
    expect((await request(server.base, "POST", appendPath("a.log"), { token: owner.token, json: { text: "x" } })).status).toBe(201);
    const asked = await request(server.base, "POST", "/api/v1/export", { token: owner.token, headers });
    expect(asked.status).toBe(202);
    const links = await exportMailLinks(dataDir, port);
    expect(links).toContain(`http://localhost:${port}/api/v1/export/${asked.body.id}/download`);
    // The answer's own link names the origin the proxy wrote.
    const status = await request(server.base, "GET", `/api/v1/export/${asked.body.id}`, { token: owner.token, headers });
    expect(status.body.download_url).toBe(`https://notes.example.com/api/v1/export/${asked.body.id}/download`);
  }, 30_000);
});

describe("without a proxy and without a base URL", () => {
  const it = served("mail-host", "host@example.com", {});

  test("an export asked for with a forged Host mails links to the configured origin", async () => {
    const { server, dataDir, port, owner } = it;
    expect((await request(server.base, "POST", appendPath("b.log"), { token: owner.token, json: { text: "x" } })).status).toBe(201);
    const asked = await raw(port, "POST", "/api/v1/export", { Host: "evil.test", Authorization: `Bearer ${owner.token}` });
    expect(asked.status).toBe(202);
    await exportMailLinks(dataDir, port);
  }, 30_000);

  test("a test alert sent from the stream's settings page with a forged Host mails links to the configured origin", async () => {
    const { server, dataDir, port, owner } = it;
    const made = await request(server.base, "POST", appendPath("quiet.log"), { token: owner.token, json: { text: "x" } });
    const id = made.body.id as string;
    expect((await request(server.base, "PATCH", `/api/v1/notes/${id}`, { token: owner.token, json: { note: { expected_interval_seconds: 3600 } } })).status).toBe(200);
    const cookie = await signIn(server.base, owner.email);
    const page = await fetch(`${server.base}/notes/${id}/settings`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const sent = await raw(
      port,
      "POST",
      `/notes/${id}/deadman/test`,
      { Host: "evil.test", Origin: "http://evil.test", Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
      new URLSearchParams({ _csrf: csrfOf(await page.text()) }).toString(),
    );
    expect(sent.status).toBe(303);
    expect(sent.headers).toMatch(/\r\nlocation: \/notes\/[^/]+\/settings/i);
    const mail = await mailTo(dataDir, /\[test\]/);
    expect(mail.text).not.toContain("evil.test");
    const links = linksIn(mail);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link).toStartWith(`http://localhost:${port}/`);
  }, 30_000);
});
