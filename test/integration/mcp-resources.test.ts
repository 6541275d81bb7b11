/**
 * The hosted endpoint's resources, subscriptions, prompts and resource links, through the MCP
 * SDK's own client over Streamable HTTP; notes are written through the REST API.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { tokens } from "../../src/db/tables";
import { hostedSessions } from "../../src/mcp/sessions";
import { followers } from "../../src/modules/streams/follow";
import { revokeToken } from "../../src/modules/tokens/service";
import { harness, type Harness } from "../helpers/harness";
import { connectV1, restOf, serveOnLoopback } from "../helpers/mcp-hosted";
import { exercisePinned, exercisePrompts, exerciseResourceLinks, exerciseResources, exerciseSubscriptions, type Rest } from "../helpers/mcp-resources";

let h: Harness;
let server: ReturnType<typeof Bun.serve> | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  server?.stop(true);
  server = undefined;
  await h.close();
});

async function setUp(): Promise<{ base: string; token: string; rest: Rest; account: { accountId: string; workspaceId: string } }> {
  h = await harness();
  let base: string;
  ({ server, base } = serveOnLoopback(h));
  const account = await h.account("dev");
  const token = await h.token(account, ["read", "write"]);
  return { base, token, rest: restOf(base, token), account };
}

const connect = (base: string, token: string) => connectV1(base, token, "resources-test", clients);

describe("hosted MCP resources, subscriptions and prompts", () => {
  test("templates, the caller's notes listed page by page, both kinds read, completions by prefix", async () => {
    const { base, token, rest } = await setUp();
    await exerciseResources(await connect(base, token), rest);
  });

  test("a subscribed stream's append through the REST API is notified within 2 s, and no more once unsubscribed", async () => {
    const { base, token, rest } = await setUp();
    await exerciseSubscriptions(await connect(base, token), rest);
  });

  test("the three prompts embed the lines they are about as the stream's resource", async () => {
    const { base, token, rest } = await setUp();
    await exercisePrompts(await connect(base, token), rest);
  });

  test("append_note and create_note results carry a resource_link to their note", async () => {
    const { base, token } = await setUp();
    await exerciseResourceLinks(await connect(base, token));
  });

  test("a token pinned to one stream lists, reads, completes and subscribes to it only", async () => {
    const { base, rest, account } = await setUp();
    await exercisePinned(rest, async (noteId) => connect(base, await h.token(account, ["read", "append"], { noteId })));
  });

  test("a token without read scope is offered no resources and no prompts", async () => {
    const { base } = await setUp();
    const client = await connect(base, await h.token(await h.account("dev", "append@example.com"), ["append"]));
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    expect(client.getServerCapabilities()?.prompts).toBeUndefined();
    await expect(client.listResources()).rejects.toThrow();
  });

  test("a session's subscriptions take none of the token's follows: only its event stream does", async () => {
    const { base, token, rest } = await setUp();
    for (let i = 0; i < 12; i++) await rest.append(`s${i}.log`, "x");
    const client = await connect(base, token);
    for (let i = 0; i < 12; i++) await client.subscribeResource({ uri: `notestream://streams/s${i}.log` });
    const follow = await fetch(`${base}/api/v1/notes/by-filename/s0.log/lines`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
    expect(follow.status).toBe(200);
    await follow.body?.cancel();
  });

  test("a session's event stream ends at the first heartbeat after its token is revoked", async () => {
    const { base, token } = await setUp();
    followers(h.deps).heartbeatMs = 100;
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await fetch(`${base}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
    });
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const stream = await fetch(`${base}/mcp`, { headers: { ...headers, accept: "text/event-stream", "mcp-session-id": sessionId } });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reader = stream.body!.getReader();
    await reader.read(); // the opening comment: the stream is open
    const [row] = await h.deps.db.select({ id: tokens.id }).from(tokens).limit(1);
    await h.deps.writer.write(() => revokeToken(h.deps, row!.id));
    const ended = async () => {
      for (;;) if ((await reader.read()).done) return "ended";
    };
    expect(await Promise.race([ended(), Bun.sleep(1_000).then(() => "still open")])).toBe("ended");
  });

  test("a session's event stream ends with DELETE, and a subscribe outside a session this instance holds is refused", async () => {
    const { base, token, rest } = await setUp();
    await rest.append("s.log", "x");
    const client = await connect(base, token);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    expect(sessionId).toBeString();
    expect(hostedSessions(h.deps).size).toBe(1);
    // Another token cannot use the session: it is as if there were none.
    const other = await h.token(await h.account("dev", "other@example.com"));
    const stolen = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${other}`, accept: "text/event-stream", "mcp-session-id": sessionId } });
    expect(stolen.status).toBe(405);
    const outside = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": "unknown" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "notestream://streams/s.log" } }),
    });
    expect(((await outside.json()) as { error: { message: string } }).error.message).toStartWith("unavailable: this request is not in a session");
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    expect(hostedSessions(h.deps).size).toBe(0);
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await rest.append("s.log", "after the end");
    await Bun.sleep(300);
    expect(updates).toEqual([]);
  });
});
