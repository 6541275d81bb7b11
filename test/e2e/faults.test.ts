/**
 * Faults with clear answers, on the compiled binary over real sockets: short Host headers, bytes
 * that are not UTF-8 (in JSON, text/plain, form and inbox bodies, paths and MCP's stdio), and bodies
 * over the limit answered so that a client which sends its whole body before reading sees the 413.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { buildBinary, childEnv, cleanup, provision, request, startServer, tempDir, withTimeout, type RunningServer } from "../helpers/binary";

let BIN = "";
let server: RunningServer;
let token = "";

beforeAll(async () => {
  BIN = buildBinary();
  const dataDir = tempDir("data");
  ({ token } = provision(dataDir));
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false", NOTESTREAM_LIMIT_PROFILE: "unlimited" });
}, 90_000);

afterAll(async () => {
  await server?.stop("SIGTERM").catch(() => {});
  await cleanup();
});

/** One HTTP/1.1 request written byte for byte on a fresh connection; the answer's status line, headers and body. */
async function raw(head: string, body: Uint8Array | string = ""): Promise<{ status: number; headers: string; body: string }> {
  const bytes = typeof body === "string" ? Buffer.from(body, "latin1") : Buffer.from(body);
  const socket = connect(server.port, "127.0.0.1");
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", resolve);
    socket.on("close", () => resolve());
    socket.on("error", reject);
  });
  socket.write(Buffer.concat([Buffer.from(`${head.trim().replaceAll("\n", "\r\n")}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`, "latin1"), bytes]));
  await withTimeout(done, 10_000, "the answer");
  const text = Buffer.concat(chunks).toString("utf8");
  const split = text.indexOf("\r\n\r\n");
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: text.slice(split + 4) };
}

const auth = () => `Authorization: Bearer ${token}`;

describe("a Host header of any length gets the same answers", () => {
  test("GET, PATCH and HEAD with Host api, web, ns, a and app:80 answer as with a long host", async () => {
    const created = await request(server.base, "POST", "/api/v1/notes/by-filename/hosts.log/append", { token, json: { text: "first" } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    for (const host of ["api", "web", "ns", "a", "app:80", "notestream.example.com"]) {
      const up = await raw(`GET /up HTTP/1.1\nHost: ${host}`);
      expect({ host, status: up.status }).toEqual({ host, status: 200 });
      const deep = await raw(`GET /up/deep HTTP/1.1\nHost: ${host}`);
      expect({ host, status: deep.status }).toEqual({ host, status: 200 });
      const list = await raw(`GET /api/v1/notes?limit=1 HTTP/1.1\nHost: ${host}\n${auth()}`);
      expect({ host, status: list.status }).toEqual({ host, status: 200 });
      // Links name the host the client used, and nothing else (no user name the boundary added).
      const origin = `http://${host.replace(/:80$/, "")}`; // the default port is no part of an origin
      expect(list.headers).toContain(`\r\nLink: <${origin}/api/v1/notes?limit=1&offset=0>; rel="first"`);
      const lines = await raw(`GET /api/v1/notes/${id}/lines?last=5 HTTP/1.1\nHost: ${host}\n${auth()}`);
      expect({ host, status: lines.status }).toEqual({ host, status: 200 });
      expect(JSON.parse(lines.body).lines[0].text).toBe("first");
      const patch = await raw(`PATCH /api/v1/notes/${id} HTTP/1.1\nHost: ${host}\n${auth()}\nContent-Type: application/json`, JSON.stringify({ note: { title: `via ${host}` } }));
      expect({ host, status: patch.status, title: JSON.parse(patch.body).title }).toEqual({ host, status: 200, title: `via ${host}` });
      const head = await raw(`HEAD /up HTTP/1.1\nHost: ${host}`);
      expect({ host, status: head.status }).toEqual({ host, status: 200 });
      const home = await raw(`GET / HTTP/1.1\nHost: ${host}`);
      expect({ host, status: home.status < 400 }).toEqual({ host, status: true });
      const missing = await raw(`GET /api/v1/notes/note_missing HTTP/1.1\nHost: ${host}\n${auth()}`);
      expect({ host, status: missing.status, code: JSON.parse(missing.body).error.code }).toEqual({ host, status: 404, code: "not_found" });
    }
  });
});

describe("text that is not UTF-8 is refused, never stored changed", () => {
  const append = (path: string, type: string, body: Uint8Array | string) => raw(`POST ${path} HTTP/1.1\nHost: 127.0.0.1\n${auth()}\nContent-Type: ${type}`, body);

  test("a JSON string, a text/plain body and a path holding bytes that are not UTF-8: 400 or 422, and no note made", async () => {
    const json = await append("/api/v1/notes/by-filename/bytes.log/append", "application/json", '{"text":"\xff\xfe"}');
    expect(json.status).toBe(400);
    expect(JSON.parse(json.body).error.code).toBe("bad_request");
    const plain = await append("/api/v1/notes/by-filename/bytes.log/append", "text/plain", "ab\xff\xfecd");
    expect(plain.status).toBe(400);
    expect(JSON.parse(plain.body).error.message).toContain("UTF-8");
    const path = await append("/api/v1/notes/by-filename/\xff\xfe.log/append", "text/plain", "hello");
    expect(path.status).toBe(422);
    expect(JSON.parse(path.body).error.code).toBe("validation_failed");
    // With an Idempotency-Key the append takes the general path: the same answer.
    const keyed = await raw(`POST /api/v1/notes/by-filename/bytes.log/append HTTP/1.1\nHost: 127.0.0.1\n${auth()}\nIdempotency-Key: k-1\nContent-Type: application/json`, '{"text":"a\xc3"}');
    expect(keyed.status).toBe(400);
    const created = await append("/api/v1/notes", "application/json", '{"note":{"title":"t","body":"caf\xe9"}}');
    expect(created.status).toBe(400);
    const list = await request(server.base, "GET", "/api/v1/notes?limit=200", { token });
    expect(list.body.map((n: { filename: string | null }) => n.filename ?? "").filter((f: string) => f.includes("\ufffd") || f === "bytes.log")).toEqual([]);
    // Valid UTF-8, U+FFFD itself included, is stored as sent.
    const ok = await append("/api/v1/notes/by-filename/bytes.log/append", "text/plain", Buffer.from("caf\u00e9 \u2713 \ufffd", "utf8"));
    expect(ok.status).toBe(201);
    const lines = await request(server.base, "GET", "/api/v1/notes/by-filename/bytes.log/lines", { token });
    expect(lines.body.lines.map((l: { text: string }) => l.text)).toEqual(["caf\u00e9 \u2713 \ufffd"]);
  });

  test("an inbox payload and a web form holding bytes that are not UTF-8: 400 before anything reads them", async () => {
    const note = await request(server.base, "POST", "/api/v1/notes/by-filename/inbox-bytes.log/append", { token, json: { text: "start" } });
    const inbox = await request(server.base, "POST", `/api/v1/notes/${note.body.id}/inbox`, { token });
    const inboxPath = new URL(inbox.body.inbox_url).pathname;
    const refused = await raw(`POST ${inboxPath} HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json`, '{"event":"\xff"}');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body).error.code).toBe("bad_request");
    const octets = await raw(`POST ${inboxPath} HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/octet-stream`, "deploy \xfe done");
    expect(octets.status).toBe(400);
    const accepted = await raw(`POST ${inboxPath} HTTP/1.1\nHost: 127.0.0.1\nContent-Type: text/plain`, Buffer.from("deploy \u2713 done", "utf8"));
    expect(accepted.status).toBe(202);
    const form = await raw(`POST /signin HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/x-www-form-urlencoded`, "email=a%FF%40b.c&password=x");
    expect(form.status).toBe(400);
    expect(JSON.parse(form.body).error.message).toContain("UTF-8");
  });

  test("notestream mcp answers a line that is not UTF-8 with a parse error to its id, and appends nothing", async () => {
    const proc = Bun.spawn([BIN, "mcp"], { env: childEnv({ NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: token }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"append_to_stream","arguments":{"filename":"mcp-bytes.log","text":"a\xff b"}}}\n`;
    proc.stdin.write(`${JSON.stringify(init)}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    proc.stdin.write(Buffer.from(call, "latin1"));
    await proc.stdin.end();
    const out = await withTimeout(new Response(proc.stdout).text(), 20_000, "notestream mcp to answer");
    const answers = out.trim().split("\n").map((l) => JSON.parse(l));
    expect(answers.find((a) => a.id === 7)).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32700, message: "Parse error: the message is not valid UTF-8" } });
    const stream = await request(server.base, "GET", "/api/v1/notes/by-filename/mcp-bytes.log", { token });
    expect(stream.status).toBe(404);
  });
});

describe("a body over the limit", () => {
  /** Python's urllib, which writes the whole body before it reads the answer. */
  function urllibPost(size: number): { status: number; body: string } {
    const script = `
import sys, json, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=b"a" * int(sys.argv[2]), method="POST", headers={"Content-Type": "text/plain", "Authorization": "Bearer " + sys.argv[3]})
try:
    r = urllib.request.urlopen(req, timeout=30)
    print(json.dumps({"status": r.status, "body": r.read().decode()}))
except urllib.error.HTTPError as e:
    print(json.dumps({"status": e.code, "body": e.read().decode()}))
except Exception as e:
    print(json.dumps({"status": 0, "body": repr(e)}))
`;
    const r = spawnSync("python3", ["-c", script, `${server.base}/api/v1/notes/by-filename/big.log/append`, String(size), token], { encoding: "utf8", timeout: 60_000 });
    return JSON.parse(r.stdout);
  }

  test("a client that sends 5 MB before reading gets the 413 in the error envelope, not a broken pipe", () => {
    const r = urllibPost(5_000_000);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body).error.code).toBe("payload_too_large");
  });

  test("a body over 64 MB is answered in the envelope too, not by the runtime's empty 413", async () => {
    // Declared, not sent: the answer comes from the length alone.
    const socket = connect(server.port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const done = new Promise<void>((resolve) => {
      socket.on("data", (c: Buffer) => chunks.push(c));
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
    });
    socket.write(`POST /api/v1/notes/by-filename/big.log/append HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth()}\r\nContent-Type: text/plain\r\nContent-Length: 100000000\r\n\r\nabc`);
    await withTimeout(done, 10_000, "the 413");
    const text = Buffer.concat(chunks).toString();
    expect(text.slice(9, 12)).toBe("413");
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).error.code).toBe("payload_too_large");
    const chunked = await fetch(`${server.base}/api/v1/notes/by-filename/big.log/append`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
      body: new Blob([new Uint8Array(70 * 1024 * 1024)]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });
});
