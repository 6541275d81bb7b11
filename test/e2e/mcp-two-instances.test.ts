// A 2026-07-28 MCP client whose requests alternate between two compiled binaries on one
// PostgreSQL database, as behind a load balancer with no affinity: the transport's fetch sends each
// request to the other instance in turn and logs which one answered. That revision keeps nothing on
// an instance between requests (no initialize, no session), so everything works wherever it lands,
// a listen hears appends taken by the other instance, and a listen dropped by an instance that
// stops is listened again on the survivor. A 2025-11-25 client on the same pair works too, except
// that a subscription needs the instance that started its session.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, ProtocolError, StreamableHTTPClientTransport, type FetchLike } from "@modelcontextprotocol/client";
import { type RunningServer, append, buildBinary, cleanup, cli, readStream, startServer, tempDir } from "../helpers/binary";
import { freshDatabase, hasPostgres, type TestDatabase } from "../helpers/postgres";

const MODERN = "2026-07-28";
/** The address the clients are given: no such host, so every request goes where the rotation sends it. */
const BALANCER = "http://balancer.invalid/mcp";

type Name = "A" | "B";

/** One request the rotation passed on: where it went, what it carried, what came back. */
interface Sent {
  instance: Name;
  http: string;
  /** The JSON-RPC method of a POST (each method of a batch, joined), "" for a GET or DELETE. */
  rpc: string;
  status: number;
}

/**
 * The fetch of a client's transport that sends each request to the next live instance in turn (A,
 * B, A, B …), rewriting the URL's origin, and logs it. An instance taken out (as a load balancer's
 * health check would) gets no more requests.
 */
function rotation(instances: Record<Name, RunningServer>) {
  let live: Name[] = ["A", "B"];
  let next = 0;
  const log: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    const instance = live[next++ % live.length]!;
    const from = new URL(url);
    const sent: Sent = { instance, http: init?.method ?? "GET", rpc: rpcOf(init?.body), status: 0 };
    log.push(sent);
    const res = await globalThis.fetch(`${instances[instance].base}${from.pathname}${from.search}`, init);
    sent.status = res.status;
    return res;
  };
  return {
    fetch,
    log,
    /** Which instance the next request goes to. */
    peek: (): Name => live[next % live.length]!,
    takeOut(name: Name) {
      live = live.filter((n) => n !== name);
      next = 0;
    },
    /** The requests logged since `from` (an index of the log). */
    since: (from: number) => log.slice(from),
  };
}

function rpcOf(body: RequestInit["body"]): string {
  if (typeof body !== "string") return "";
  const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
  return (Array.isArray(parsed) ? parsed : [parsed]).map((m) => m.method ?? "(response)").join(",");
}

/** Polls a condition every few milliseconds until it holds; throws after `ms`. */
async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(5);
  }
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, any> };

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r)}`);
  return r.structuredContent!;
}

const textOfRead = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

describe.skipIf(!hasPostgres)("an MCP client alternating between two instances on one PostgreSQL", () => {
  let pg: TestDatabase;
  let dbUrl = "";
  const instances = {} as Record<Name, RunningServer>;
  let token = "";
  const other = (n: Name): Name => (n === "A" ? "B" : "A");

  function pgCli(args: string[]): string {
    const r = cli(args, { NOTESTREAM_DATABASE_URL: dbUrl });
    if (r.code !== 0) throw new Error(`notestream ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  }

  /** A client pinned to 2026-07-28 (or on the 2025-11-25 handshake), its requests alternating. */
  async function connect(era: "modern" | "legacy") {
    const turns = rotation(instances);
    const client = new Client({ name: "two-instances", version: "1.0.0" }, era === "modern" ? { versionNegotiation: { mode: { pin: MODERN } } } : {});
    const transport = new StreamableHTTPClientTransport(new URL(BALANCER), { fetch: turns.fetch, requestInit: { headers: { authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    return { client, turns };
  }

  beforeAll(async () => {
    buildBinary();
    pg = await freshDatabase({ migrated: true });
    const u = new URL(pg.url);
    u.searchParams.set("sslmode", "disable");
    dbUrl = u.toString();
    const env = { NOTESTREAM_DATABASE_URL: dbUrl };
    [instances.A, instances.B] = await Promise.all([startServer(tempDir("data-a"), env), startServer(tempDir("data-b"), env)]);
    pgCli(["account", "create", "--email", "mcp@example.com", "--plan", "dev"]);
    token = pgCli(["token", "create", "--email", "mcp@example.com", "--scope", "read,write"]).trim();
  }, 90_000);

  afterAll(async () => {
    await cleanup();
    await pg?.drop();
  });

  test("1. discover, tools, appends, lists, reads and prompts all succeed alternating; a read on one sees the append taken by the other", async () => {
    const { client, turns } = await connect("modern");
    try {
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getDiscoverResult()).toBeDefined();
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("append_note");

      // Each append is read back by the next request, which lands on the other instance; a list
      // after it makes three requests a round, so the appends land on A and B in turn.
      const texts = ["one", "two", "three", "four"];
      let created: Record<string, any> | null = null;
      for (const [i, text] of texts.entries()) {
        const appended = await tool(client, "append_note", { filename: "alt.log", text });
        created ??= appended;
        const body = `${texts.slice(0, i + 1).join("\n")}\n`;
        const read = await client.readResource({ uri: "notestream://streams/alt.log" });
        expect(textOfRead(read)).toBe(body);
        const [a, r] = turns.log.slice(-2);
        expect({ append: a!.rpc, read: r!.rpc }).toEqual({ append: "tools/call", read: "resources/read" });
        expect(r!.instance).toBe(other(a!.instance));
        const listed = await tool(client, "list_notes", {});
        expect(listed.notes.find((n: { filename: string }) => n.filename === "alt.log")).toMatchObject({ byte_size: body.length });
      }
      expect(created).toMatchObject({ filename: "alt.log", created: true });
      const resources = (await client.listResources()).resources;
      expect(resources.map((r) => r.uri)).toContain("notestream://streams/alt.log");
      const byId = await client.readResource({ uri: `notestream://notes/${created!.id}` });
      expect(textOfRead(byId)).toBe("one\ntwo\nthree\nfour\n");
      const prompt = await client.getPrompt({ name: "summarise_stream", arguments: { filename: "alt.log" } });
      expect(JSON.stringify(prompt.messages)).toContain("four");
      expect(await readStream(instances.B.base, token, "alt.log")).toBe("one\ntwo\nthree\nfour\n");

      // Every request was a POST answered 200, strictly alternating, so both instances served each kind.
      const log = turns.log;
      for (const s of log) expect({ rpc: s.rpc, http: s.http, status: s.status }).toEqual({ rpc: s.rpc, http: "POST", status: 200 });
      log.forEach((s, i) => expect(s.instance).toBe(i % 2 === 0 ? "A" : "B"));
      expect(log[0]!.rpc).toBe("server/discover");
      const served = (rpc: string) => new Set(log.filter((s) => s.rpc === rpc).map((s) => s.instance));
      expect(served("tools/call")).toEqual(new Set(["A", "B"]));
      expect(served("resources/read")).toEqual(new Set(["A", "B"]));
      for (const rpc of ["server/discover", "tools/list", "resources/list", "prompts/get"]) expect(served(rpc).size).toBe(1);
      expect(log.some((s) => s.rpc === "initialize")).toBe(false);
    } finally {
      await client.close();
    }
  }, 20_000);

  test("2. a listen on one instance hears every append taken by the other within 2 s, through REST and through append_note", async () => {
    expect((await append(instances.A.base, token, "watched.log", "before")).status).toBe(201);
    const { client, turns } = await connect("modern");
    try {
      const updates: string[] = [];
      client.setNotificationHandler("notifications/resources/updated", async (n) => void updates.push(n.params.uri));
      const from = turns.log.length;
      const uri = "notestream://streams/watched.log";
      const sub = await client.listen({ resourceSubscriptions: [uri, "notestream://streams/missing.log"] });
      // The filter keeps only what can be followed.
      expect(sub.honoredFilter.resourceSubscriptions).toEqual([uri]);
      const listen = turns.since(from).find((s) => s.rpc === "subscriptions/listen")!;
      expect(listen.status).toBe(200);
      const listener = listen.instance;
      const elsewhere = instances[other(listener)];

      /** Makes one append, waits for its notification (at most 2 s), and checks none came twice. */
      const noticed = async (what: string, act: () => Promise<unknown>) => {
        const before = updates.length;
        const started = Date.now();
        await act();
        await until(`the update after ${what}`, 2_000, () => updates.length > before);
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(updates.slice(before)).toEqual([uri]);
      };
      for (let i = 0; i < 5; i++) {
        await noticed(`REST append ${i} on ${other(listener)}`, async () => expect((await append(elsewhere.base, token, "watched.log", `rest ${i}`)).status).toBe(200));
      }
      // append_note alternates too: two calls put one on each instance, the listener's and the other.
      const calls = turns.log.length;
      for (let i = 0; i < 2; i++) await noticed(`append_note ${i}`, () => tool(client, "append_note", { filename: "watched.log", text: `tool ${i}` }));
      const toolCalls = turns.since(calls).filter((s) => s.rpc === "tools/call");
      expect(new Set(toolCalls.map((s) => s.instance))).toEqual(new Set(["A", "B"]));
      expect(updates).toHaveLength(7);
      // Appends to a stream not listened to are not heard.
      expect((await append(elsewhere.base, token, "unwatched.log", "quiet")).status).toBe(201);
      await noticed("one more append", () => append(elsewhere.base, token, "watched.log", "last"));
      expect(new Set(updates)).toEqual(new Set([uri]));

      await sub.close();
      expect(await sub.closed).toBe("local");
    } finally {
      await client.close();
    }
  }, 20_000);

  test("3. a 2025-11-25 client alternating: everything outside subscriptions works on either instance", async () => {
    const { client, turns } = await connect("legacy");
    try {
      expect(client.getProtocolEra()).toBe("legacy");
      // After initialize (one instance) and its notification (the other), the client opens the
      // session's event stream: waited for before any other request, it is the third, on the
      // instance that started the session, which holds it.
      await until("the event stream's GET", 2_000, () => turns.log.some((s) => s.http === "GET" && s.status !== 0));
      expect(turns.log.map((s) => [s.instance, s.http, s.rpc, s.status])).toEqual([
        ["A", "POST", "initialize", 200],
        ["B", "POST", "notifications/initialized", 202],
        ["A", "GET", "", 200],
      ]);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("append_note");
      for (const text of ["old one", "old two"]) await tool(client, "append_note", { filename: "legacy.log", text });
      expect(textOfRead(await client.readResource({ uri: "notestream://streams/legacy.log" }))).toBe("old one\nold two\n");
      expect((await tool(client, "list_notes", {})).notes.map((n: { filename: string }) => n.filename)).toContain("legacy.log");
      expect((await client.listResources()).resources.map((r) => r.uri)).toContain("notestream://streams/legacy.log");
      const prompt = await client.getPrompt({ name: "summarise_stream", arguments: { filename: "legacy.log" } });
      expect(JSON.stringify(prompt.messages)).toContain("old two");

      const posts = turns.log.filter((s) => s.http === "POST");
      const home: Name = "A";
      for (const s of posts) expect({ rpc: s.rpc, status: s.status }).toEqual({ rpc: s.rpc, status: s.rpc === "notifications/initialized" ? 202 : 200 });
      const served = (rpc: string) => new Set(posts.filter((s) => s.rpc === rpc).map((s) => s.instance));
      expect(served("tools/call")).toEqual(new Set(["A", "B"]));
      expect(new Set(posts.map((s) => s.instance))).toEqual(new Set(["A", "B"]));

      // The session (the event stream and its subscriptions) is held by the instance that answered
      // initialize. A resources/subscribe landing on the other one is refused with -32600 and
      // "unavailable: …": that instance has no event stream of the session to notify on.
      // (A GET of the event stream landing there is answered 405, and the client stops asking.)
      if (turns.peek() === home) await client.ping();
      expect(turns.peek()).toBe(other(home));
      const refused = await client.subscribeResource({ uri: "notestream://streams/legacy.log" }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32600);
      expect((refused as ProtocolError).message).toContain("unavailable: this request is not in a session this server holds");
      // On the session's own instance it is accepted, and an append taken by the other instance
      // is notified on the session's event stream.
      expect(turns.peek()).toBe(home);
      const updates: string[] = [];
      client.setNotificationHandler("notifications/resources/updated", async (n) => void updates.push(n.params.uri));
      expect(await client.subscribeResource({ uri: "notestream://streams/legacy.log" })).toEqual({});
      expect((await append(instances[other(home)].base, token, "legacy.log", "old three")).status).toBe(200);
      await until("the update on the session's event stream", 2_000, () => updates.length > 0);
      expect(updates).toEqual(["notestream://streams/legacy.log"]);
    } finally {
      await client.close();
    }
  }, 20_000);

  // Last: it stops one instance.
  test("4. SIGTERM of the instance holding a listen ends it as 'remote'; listening again lands on the survivor and hears appends", async () => {
    expect((await append(instances.A.base, token, "survive.log", "before")).status).toBe(201);
    const { client, turns } = await connect("modern");
    try {
      const updates: string[] = [];
      client.setNotificationHandler("notifications/resources/updated", async (n) => void updates.push(n.params.uri));
      const uri = "notestream://streams/survive.log";
      const from = turns.log.length;
      const sub = await client.listen({ resourceSubscriptions: [uri] });
      const holder = turns.since(from).find((s) => s.rpc === "subscriptions/listen")!.instance;
      const survivor = other(holder);
      expect((await append(instances[survivor].base, token, "survive.log", "heard before the stop")).status).toBe(200);
      await until("the update before the stop", 2_000, () => updates.length === 1);

      expect(await instances[holder].stop("SIGTERM")).toBe(0);
      expect(await sub.closed).toBe("remote");
      // The balancer stops sending to the instance that went.
      turns.takeOut(holder);

      const again = turns.log.length;
      const relisten = await client.listen({ resourceSubscriptions: [uri] });
      expect(relisten.honoredFilter.resourceSubscriptions).toEqual([uri]);
      expect(turns.since(again).map((s) => ({ rpc: s.rpc, instance: s.instance, status: s.status }))).toEqual([{ rpc: "subscriptions/listen", instance: survivor, status: 200 }]);
      const started = Date.now();
      expect((await append(instances[survivor].base, token, "survive.log", "heard after the stop")).status).toBe(200);
      await until("the update after the stop", 2_000, () => updates.length === 2);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await tool(client, "append_note", { filename: "survive.log", text: "by tool" })).toMatchObject({ filename: "survive.log" });
      await until("the update of the tool's append", 2_000, () => updates.length === 3);
      expect(updates).toEqual([uri, uri, uri]);
      expect(await readStream(instances[survivor].base, token, "survive.log")).toBe("before\nheard before the stop\nheard after the stop\nby tool\n");
      await relisten.close();
    } finally {
      await client.close();
    }
  }, 30_000);
});
