/**
 * The hosted endpoint through the v2 SDK's client (`@modelcontextprotocol/client`): pinned to
 * revision 2026-07-28 (no session: any instance answers any request, listen for updates), in
 * "auto" mode, and in its default 2025-11-25 handshake. The v1 client's tests are mcp.test.ts
 * and mcp-resources.test.ts; the checks themselves are shared (helpers/mcp*.ts).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Client, SdkHttpError, SERVER_INFO_META_KEY, StreamableHTTPClientTransport, type VersionNegotiationMode } from "@modelcontextprotocol/client";
import { tokens } from "../../src/db/tables";
import { followers } from "../../src/modules/streams/follow";
import { revokeToken } from "../../src/modules/tokens/service";
import { harness, type Harness } from "../helpers/harness";
import { restOf, serveOnLoopback } from "../helpers/mcp-hosted";
import { exerciseAllTools, tool } from "../helpers/mcp";
import { exerciseListen, exercisePinned, exercisePrompts, exerciseResourceLinks, exerciseResources, exerciseSubscriptions, type Rest } from "../helpers/mcp-resources";

let h: Harness;
let server: ReturnType<typeof Bun.serve> | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  server?.stop(true);
  server = undefined;
  await h.close();
});

/** The app of `h` on a real loopback port. */
function serve(): string {
  let base: string;
  ({ server, base } = serveOnLoopback(h));
  return base;
}

async function setUp(): Promise<{ base: string; token: string; rest: Rest; account: { accountId: string; workspaceId: string } }> {
  h = await harness();
  const base = serve();
  const account = await h.account("dev");
  const token = await h.token(account, ["read", "write"]);
  return { base, token, rest: restOf(base, token), account };
}

const MODERN = { pin: "2026-07-28" } as const;

/** A v2 client on /mcp; `fetch` lets a test see or redirect what it sends. */
async function connect(base: string, token: string, mode: VersionNegotiationMode = MODERN, fetchVia?: typeof fetch): Promise<Client> {
  const client = new Client({ name: "v2-test", version: "1.0.0" }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: fetchVia });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const streamUri = (filename: string) => `notestream://streams/${encodeURIComponent(filename)}`;

describe("hosted MCP, v2 client pinned to 2026-07-28", () => {
  test("the era is modern and server/discover names the server and what it offers", async () => {
    const { base, token } = await setUp();
    const client = await connect(base, token);
    expect(client.getProtocolEra()).toBe("modern");
    const discovered = client.getDiscoverResult()!;
    expect(discovered.supportedVersions).toContain("2026-07-28");
    expect(discovered._meta?.[SERVER_INFO_META_KEY]).toMatchObject({ name: "notestream" });
    expect(client.getServerVersion()?.name).toBe("notestream");
    expect(discovered.capabilities).toMatchObject({ resources: { subscribe: true }, prompts: {}, completions: {}, tools: {} });
    expect(discovered.instructions).toContain("notestream stores plain-text notes");
  });

  test("every tool works and the notes really change", async () => {
    const { base, token } = await setUp();
    await exerciseAllTools(await connect(base, token), async (filename) => {
      const res = await fetch(`${base}/api/v1/notes/by-filename/${filename}`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as { plain_body: string }).plain_body;
    });
  });

  test("templates, the caller's notes listed page by page, both kinds read, completions by prefix", async () => {
    const { base, token, rest } = await setUp();
    await exerciseResources(await connect(base, token), rest);
  });

  test("the three prompts embed their lines; append_note and create_note link their note", async () => {
    const { base, token, rest } = await setUp();
    const client = await connect(base, token);
    await exercisePrompts(client, rest);
    await exerciseResourceLinks(client);
  });

  test("a token pinned to one stream lists, reads, completes and listens to it only", async () => {
    const { base, rest, account } = await setUp();
    await exercisePinned(rest, async (noteId) => connect(base, await h.token(account, ["read", "append"], { noteId })));
  });

  test("listen: the filter narrowed to the caller's streams, each listen notified of its own within 2 s, none after close", async () => {
    const { base, token, rest } = await setUp();
    const stranger = await h.account("dev", "stranger@example.com");
    // Another account's stream by its note's address: the stream exists, it is just not the caller's.
    const foreign = await restOf(base, await h.token(stranger)).append("watched.log", "theirs");
    await exerciseListen(await connect(base, token), rest, `notestream://notes/${foreign.id}`);
  }, 20_000);

  test("no session: answers carry no Mcp-Session-Id, and a restarted instance answers the same client", async () => {
    const { token, rest } = await setUp();
    await rest.append("kept.log", "before the restart");
    // The client keeps one address; each request goes to whichever instance is running.
    let target = serve();
    const sessionIds: (string | null)[] = [];
    const via = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const res = await fetch(new URL(url.pathname + url.search, target), init);
      sessionIds.push(res.headers.get("mcp-session-id"));
      return res;
    }) as typeof fetch;
    const client = await connect("http://instance.invalid", token, MODERN, via);
    expect(await tool(client, "read_note", { id: (await rest.append("kept.log", "x")).id, last_lines: 1 })).toMatchObject({ plain_body: "x\n" });

    // Everything this instance held is gone with it: a new one on the same database answers.
    server!.stop(true);
    const { dataDir, clock } = h;
    await h.stop();
    h = await harness({ dataDir, clock });
    target = serve();
    const listed = await tool(client, "list_notes", {});
    expect(listed.notes.map((n: { filename: string }) => n.filename)).toEqual(["kept.log"]);
    expect((await client.readResource({ uri: streamUri("kept.log") })).contents).toMatchObject([{ text: "before the restart\nx\n" }]);
    expect(sessionIds.length).toBeGreaterThanOrEqual(4);
    expect(sessionIds.every((id) => id === null)).toBe(true);
  });

  test("a listen whose token is revoked ends at the next heartbeat, as a dropped connection", async () => {
    const { base, token, rest } = await setUp();
    followers(h.deps).heartbeatMs = 100;
    await rest.append("watched.log", "x");
    const listen = await (await connect(base, token)).listen({ resourceSubscriptions: [streamUri("watched.log")] });
    const [row] = await h.deps.db.select({ id: tokens.id }).from(tokens).limit(1);
    await h.deps.writer.write(() => revokeToken(h.deps, row!.id));
    expect(await listen.closed).toBe("remote");
  });

  test("a token holds ten listens: the eleventh is refused with 429 until one closes", async () => {
    const { base, token, rest } = await setUp();
    await rest.append("busy.log", "x");
    const client = await connect(base, token);
    const filter = { resourceSubscriptions: [streamUri("busy.log")] };
    const listens = [];
    for (let i = 0; i < 10; i++) listens.push(await client.listen(filter));
    const refused = await client.listen(filter).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(SdkHttpError);
    expect((refused as SdkHttpError).status).toBe(429);
    await listens[0]!.close();
    // The slot is freed once the server has seen the stream go.
    let again;
    for (const t0 = Date.now(); !again && Date.now() - t0 < 5_000; ) again = await client.listen(filter).catch(() => Bun.sleep(20).then(() => undefined));
    expect(again?.honoredFilter.resourceSubscriptions).toEqual(filter.resourceSubscriptions);
    for (const l of [...listens, again!]) await l.close();
  });
});

describe("hosted MCP, v2 client negotiating", () => {
  test('"auto" probes with server/discover and lands on 2026-07-28', async () => {
    const { base, token } = await setUp();
    const client = await connect(base, token, "auto");
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getDiscoverResult()?._meta?.[SERVER_INFO_META_KEY]).toMatchObject({ name: "notestream" });
    expect((await client.listTools()).tools.length).toBe(11);
  });

  test("by default it speaks 2025-11-25 in a session, and subscribeResource works in it", async () => {
    const { base, token, rest } = await setUp();
    const client = await connect(base, token, "legacy");
    expect(client.getProtocolEra()).toBe("legacy");
    expect(client.getDiscoverResult()).toBeUndefined();
    expect((client.transport as StreamableHTTPClientTransport).sessionId).toBeString();
    await exerciseSubscriptions(client, rest);
  });
});
