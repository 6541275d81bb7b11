/**
 * `notestream mcp` over stdio, driven by the MCP SDK's own clients (v1 `@modelcontextprotocol/sdk`
 * on 2025-11-25; v2 `@modelcontextprotocol/client` pinned to 2026-07-28, in "auto" mode and on its
 * default 2025-11-25): the compiled binary is the MCP server, talking to another instance of the
 * binary serving the REST API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client as ClientV2, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { buildBinary, childEnv, cleanup, cliOk, getNote, provision, readStream, request, startServer, tempDir, withTimeout, type RunningServer } from "../helpers/binary";
import { exerciseAllTools, toolError } from "../helpers/mcp";
import { exerciseListen, exercisePinned, exercisePrompts, exerciseResourceLinks, exerciseResources, exerciseSubscriptions, type Rest } from "../helpers/mcp-resources";

let BIN = "";
let server: RunningServer;
let dataDir = "";
const clients: (Client | ClientV2)[] = [];

beforeAll(async () => {
  BIN = buildBinary();
  dataDir = tempDir("data");
  provision(dataDir);
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
}, 90_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.stop("SIGTERM").catch(() => {});
  await cleanup();
});

/** `notestream mcp` as a client spawns it, with `withToken`; both SDKs' stdio transports take this. */
const spawned = (withToken: string) => ({ command: BIN, args: ["mcp"], env: childEnv({ NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: withToken }), stderr: "pipe" as const });

/** The v1 SDK's client on `notestream mcp`: revision 2025-11-25. */
async function connect(withToken: string): Promise<Client> {
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport(spawned(withToken)));
  clients.push(client);
  return client;
}

/** The v2 SDK's client on `notestream mcp`; "auto" probes the revision with a sibling process first. */
async function connectV2(withToken: string, mode: VersionNegotiationMode = { pin: "2026-07-28" }): Promise<ClientV2> {
  const client = new ClientV2({ name: "stdio-v2-test", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(new StdioClientTransportV2(spawned(withToken)));
  clients.push(client);
  return client;
}

/** Lines written to `notestream mcp` in one write, stdin closed at once, as `printf … | notestream mcp` does. */
async function pipeInto(withToken: string, input: string): Promise<{ code: number; answers: any[]; stderr: string }> {
  const proc = Bun.spawn([BIN, "mcp"], {
    env: childEnv({ NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: withToken }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  proc.stdin.write(input);
  await proc.stdin.end();
  const [stdout, stderr, code] = await withTimeout(
    Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]),
    20_000,
    "notestream mcp to exit after its input closed",
  ).catch((e) => {
    proc.kill("SIGKILL");
    throw e;
  });
  return { code, answers: stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)), stderr };
}

/** The REST API of the server `notestream mcp` talks to, with the same token. */
function restFor(withToken: string): Rest {
  const ok = async (method: string, path: string, json?: unknown) => {
    const r = await request(server.base, method, `/api/v1${path}`, { token: withToken, json });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    append: (filename, text) => ok("POST", `/notes/by-filename/${encodeURIComponent(filename)}/append`, { text }),
    createNote: (title, plain_body) => ok("POST", "/notes", { note: { title, plain_body } }),
    lines: async (filename) => (await ok("GET", `/notes/by-filename/${encodeURIComponent(filename)}/lines?last=1000`)).lines,
  };
}

/**
 * Whether the token gets all ten of its follows of `filename` through the REST API, tried for up
 * to 5 s (a follow ends when the server sees its connection go; a round's own follows are closed
 * before the next, which waits 200 ms for the server to see them go).
 */
async function allFollowsFree(withToken: string, filename: string): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < 5_000; await Bun.sleep(200)) {
    const held = new AbortController();
    const url = `${server.base}/api/v1/notes/by-filename/${encodeURIComponent(filename)}/lines`;
    const follows = await Promise.all(Array.from({ length: 10 }, () => fetch(url, { headers: { authorization: `Bearer ${withToken}`, accept: "text/event-stream" }, signal: held.signal })));
    const free = follows.every((r) => r.status === 200);
    await Promise.allSettled(follows.map((r) => r.body?.cancel()));
    held.abort();
    if (free) return true;
  }
  return false;
}

const rpc = (id: number | null, method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", ...(id === null ? {} : { id }), method, params });
const INIT = rpc(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "printf", version: "1" } });
const INITIALIZED = rpc(null, "notifications/initialized");
const textOfAnswer = (a: any): string => a.result?.content?.[0]?.text ?? "";

describe("notestream mcp (stdio)", () => {
  test("piped requests are all answered before it exits at the end of input", async () => {
    const own = provision(dataDir, "pipe@example.com").token;
    const input = [
      INIT,
      INITIALIZED,
      rpc(2, "tools/call", { name: "append_note", arguments: { filename: "piped.log", text: "first" } }),
      rpc(3, "tools/call", { name: "append_note", arguments: { filename: "piped.log", text: "second" } }),
      // A call that fails is an answer like any other, not a failure of the process.
      rpc(4, "tools/call", { name: "read_note", arguments: { id: "note_missing" } }),
    ].map((l) => `${l}\n`).join("");
    const r = await pipeInto(own, input);
    expect(r.answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4]);
    const byId = Object.fromEntries(r.answers.map((a) => [a.id, a]));
    expect(byId[2].result.isError).toBeUndefined();
    expect(byId[3].result.isError).toBeUndefined();
    expect(byId[4].result.isError).toBe(true);
    expect(textOfAnswer(byId[4])).toStartWith("not_found:");
    // MCP requests run concurrently: both lines are there, in either order.
    expect((await readStream(server.base, own, "piped.log")).split("\n").sort()).toEqual(["", "first", "second"]);
    expect(r.code).toBe(0);
  }, 30_000);

  test("a last request without a final newline is still answered", async () => {
    const own = provision(dataDir, "unterminated@example.com").token;
    const input = `${INIT}\n${INITIALIZED}\n${rpc(2, "tools/call", { name: "append_note", arguments: { filename: "unterminated.log", text: "kept" } })}`;
    const r = await pipeInto(own, input);
    expect(r.answers.map((a) => a.id).sort()).toEqual([1, 2]);
    expect(await readStream(server.base, own, "unterminated.log")).toBe("kept\n");
    expect(r.code).toBe(0);
  }, 30_000);

  test("a read-only token lists no write tools", async () => {
    const readOnly = cliOk(dataDir, ["token", "create", "--email", "ops@example.com", "--scope", "read"]).stdout.trim();
    const client = await connect(readOnly);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["list_folders", "list_notes", "read_note"]);
    expect(await toolError(client, "read_note", { id: "note_missing" })).toStartWith("not_found:");
    // The same words as over hosted HTTP: the code first, the field or the missing scope named.
    expect(await toolError(client, "read_note", {})).toBe("validation_failed: id is required");
    expect(await toolError(client, "append_note", { filename: "x.log", text: "y" })).toBe("insufficient_scope: this token lacks the append scope");
  }, 30_000);

  test("a subscribed stream's append through the REST API is notified within 2 s, and no more once unsubscribed", async () => {
    const own = provision(dataDir, "subscriber@example.com").token;
    await exerciseSubscriptions(await connect(own), restFor(own));
  }, 30_000);

  test("a subscribe the server cannot follow (the token's follows all taken) is refused, not left silent", async () => {
    const own = provision(dataDir, "busy@example.com").token;
    await restFor(own).append("busy.log", "x");
    const held = new AbortController();
    const follows = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${server.base}/api/v1/notes/by-filename/busy.log/lines`, { headers: { authorization: `Bearer ${own}`, accept: "text/event-stream" }, signal: held.signal }),
      ),
    );
    try {
      expect(follows.map((r) => r.status)).toEqual(Array(10).fill(200));
      const client = await connect(own);
      // A collection here, as one came in CI: the follows must still be held after it (finally).
      Bun.gc(true);
      await Bun.sleep(200);
      await expect(client.subscribeResource({ uri: "notestream://streams/busy.log" })).rejects.toThrow("rate_limited");
    } finally {
      // Used here so they stay reachable until now: a Response the collector takes closes its
      // connection, and the server frees that follow's slot.
      await Promise.all(follows.map((r) => r.body?.cancel()));
      held.abort();
    }
  }, 30_000);

  test("without NOTESTREAM_TOKEN it exits with a clear message", () => {
    const r = Bun.spawnSync([BIN, "mcp"], { env: childEnv({ NOTESTREAM_URL: server.base }), stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 10_000 });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.toString()).toContain("NOTESTREAM_TOKEN is not set");
    expect(r.stdout.toString()).toBe("");
  });
});

// What every client must find, whichever SDK and revision it speaks; subscriptions differ by revision (below).
const CLIENTS = [
  { label: "v1 client (2025-11-25)", tag: "v1", connect: (withToken: string) => connect(withToken) },
  { label: "v2 client pinned to 2026-07-28", tag: "v2", connect: (withToken: string) => connectV2(withToken) },
];

for (const c of CLIENTS) {
  describe(`notestream mcp (stdio), ${c.label}`, () => {
    test("every tool, against the REST API of a running server", async () => {
      const own = provision(dataDir, `${c.tag}-tools@example.com`).token;
      await exerciseAllTools(await c.connect(own), async (filename) => (await getNote(server.base, own, filename)).plain_body);
    }, 30_000);

    test("resources: templates, the caller's notes page by page, both kinds read, completions", async () => {
      const own = provision(dataDir, `${c.tag}-resources@example.com`).token;
      await exerciseResources(await c.connect(own), restFor(own));
    }, 30_000);

    test("the three prompts embed the lines they are about; tool results link their note", async () => {
      const own = provision(dataDir, `${c.tag}-prompts@example.com`).token;
      const client = await c.connect(own);
      await exercisePrompts(client, restFor(own));
      await exerciseResourceLinks(client);
    }, 30_000);

    test("a token pinned to one stream lists, reads, completes and subscribes (or listens) to it only", async () => {
      const { email, token: own } = provision(dataDir, `${c.tag}-pinned@example.com`);
      await exercisePinned(restFor(own), async (noteId) => c.connect(cliOk(dataDir, ["token", "create", "--email", email, "--scope", "read,append", "--note", noteId]).stdout.trim()));
    }, 30_000);
  });
}

describe("notestream mcp (stdio), v2 client", () => {
  test("pinned to 2026-07-28: the era is modern and server/discover says what it offers", async () => {
    const client = await connectV2(provision(dataDir, "v2-discover@example.com").token);
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getDiscoverResult()?.capabilities).toMatchObject({ resources: { subscribe: true }, prompts: {}, completions: {}, tools: {} });
  }, 30_000);

  test("pinned to 2026-07-28: listen follows the caller's streams only, each listen notified of its own after a REST append", async () => {
    const own = provision(dataDir, "v2-listen@example.com").token;
    const stranger = provision(dataDir, "v2-stranger@example.com").token;
    const foreign = await restFor(stranger).append("watched.log", "theirs");
    await exerciseListen(await connectV2(own), restFor(own), `notestream://notes/${foreign.id}`);
  }, 30_000);

  test('"auto" probes and lands on 2026-07-28: tools, resources, prompts, and a listen notified of a REST append', async () => {
    const own = provision(dataDir, "v2-auto@example.com").token;
    const client = await connectV2(own, "auto");
    expect(client.getProtocolEra()).toBe("modern");
    expect((await client.listTools()).tools.length).toBe(11);
    await restFor(own).append("auto.log", "first");
    expect((await client.readResource({ uri: "notestream://streams/auto.log" })).contents).toMatchObject([{ text: "first\n" }]);
    expect((await client.listPrompts()).prompts.length).toBe(3);
    const updates: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (n) => void updates.push(n.params.uri));
    const listen = await client.listen({ resourceSubscriptions: ["notestream://streams/auto.log"] });
    expect(listen.honoredFilter.resourceSubscriptions).toEqual(["notestream://streams/auto.log"]);
    await restFor(own).append("auto.log", "second");
    const t0 = Date.now();
    while (updates.length === 0 && Date.now() - t0 < 2_000) await Bun.sleep(20);
    expect(updates).toEqual(["notestream://streams/auto.log"]);
    await listen.close();
  }, 30_000);

  test("a listen refused for too many on one connection gives back the follow it took", async () => {
    const own = provision(dataDir, "v2-refused@example.com").token;
    await restFor(own).append("busy.log", "x");
    const client = await connectV2(own);
    // Ten listens of nothing followable hold the connection's ten listens and none of the token's follows.
    for (let i = 0; i < 10; i++) expect((await client.listen({ resourceSubscriptions: ["notestream://streams/missing.log"] })).honoredFilter).toEqual({});
    await expect(client.listen({ resourceSubscriptions: ["notestream://streams/busy.log"] })).rejects.toThrow("Subscription limit reached");
    // Its follow of busy.log ends once the refusal is out: all ten of the token's follows are free again.
    expect(await allFollowsFree(own, "busy.log")).toBe(true);
  }, 30_000);

  test("by default it speaks 2025-11-25, and subscribeResource works", async () => {
    const own = provision(dataDir, "v2-legacy@example.com").token;
    const client = await connectV2(own, "legacy");
    expect(client.getProtocolEra()).toBe("legacy");
    await exerciseSubscriptions(client, restFor(own));
  }, 30_000);
});
