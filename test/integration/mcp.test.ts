import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { count, eq } from "drizzle-orm";
import { buildHandler } from "../../src/app";
import { folders, notes, workspaces } from "../../src/db/tables";
import { MAX_LIMIT } from "../../src/lib/pagination";
import { FOLDER_NAME_MAX_CHARS, TITLE_MAX_CHARS } from "../../src/lib/text";
import { harness, type Harness } from "../helpers/harness";
import { exerciseAllTools, tool, toolError } from "../helpers/mcp";
import { connectV1 } from "../helpers/mcp-hosted";

let h: Harness;
let server: ReturnType<typeof Bun.serve> | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  server?.stop(true);
  server = undefined;
  await h.close();
});

/** How many notes there are. */
const noteCount = async () => (await h.deps.db.select({ n: count() }).from(notes))[0]!.n;

/** Every request the server got, as "METHOD path", to see what a client really sends. */
let seen: string[] = [];

/** The app on a real loopback port, so the SDK's HTTP client talks to it as to any server. */
function serve(): string {
  const handle = buildHandler(h.deps);
  seen = [];
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r, srv) => {
      seen.push(`${r.method} ${new URL(r.url).pathname}`);
      return handle(r, srv.requestIP(r)?.address);
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  h.deps.config.baseUrl = base;
  return base;
}

const connect = (base: string, token: string) => connectV1(base, token, "test-agent", clients);

describe("hosted MCP over Streamable HTTP", () => {
  test("with an API token: every tool works and the notes really change", async () => {
    h = await harness();
    const base = serve();
    const token = await h.token(await h.account("dev"), ["read", "write"]);
    const client = await connect(base, token);
    await exerciseAllTools(client, async (filename) => {
      const res = await fetch(`${base}/api/v1/notes/by-filename/${filename}`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as { plain_body: string }).plain_body;
    });
  });

  test("a read-only token sees no write tools, and a write through it fails", async () => {
    h = await harness();
    const base = serve();
    const token = await h.token(await h.account("dev"), ["read"]);
    const client = await connect(base, token);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["list_folders", "list_notes", "read_note"]);
    const r = (await client.callTool({ name: "append_note", arguments: { filename: "x", text: "y" } })) as { isError?: boolean };
    expect(r.isError).toBe(true);
    expect(await noteCount()).toBe(0);
  });

  test("an append-only token sees append_note only; a pinned token its note's tools only", async () => {
    h = await harness();
    const base = serve();
    const a = await h.account("dev");
    const appendOnly = await connect(base, await h.token(a, ["append"]));
    expect((await appendOnly.listTools()).tools.map((t) => t.name)).toEqual(["append_note"]);
    const full = await h.token(a);
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/pinned.log/append", { token: full, body: { text: "x" } })).json();
    const pinned = await connect(base, await h.token(a, ["read", "write"], { noteId: id }));
    expect((await pinned.listTools()).tools.map((t) => t.name).sort()).toEqual(["append_note", "delete_note", "read_note", "update_note"]);
  });

  test("arguments the tool's schema refuses are validation_failed tool errors naming the field", async () => {
    h = await harness();
    const base = serve();
    const client = await connect(base, await h.token(await h.account("dev")));
    expect(await toolError(client, "read_note", {})).toBe("validation_failed: id is required");
    expect(await toolError(client, "read_note", { id: 42 })).toBe("validation_failed: id expected string");
    expect(await toolError(client, "create_note", {})).toBe("validation_failed: title is required; plain_body is required");
    expect(await toolError(client, "create_folder", { name: "x".repeat(81) })).toBe("validation_failed: name must be at most 80 characters");
    expect(await toolError(client, "create_folder", { name: "" })).toBe("validation_failed: name must not be empty");
    expect(await toolError(client, "list_notes", { limit: "10" })).toBe("validation_failed: limit expected integer");
    expect(await toolError(client, "list_notes", { limit: 201, offset: -1 })).toBe("validation_failed: limit must be at most 200; offset must be at least 0");
    expect(await toolError(client, "move_note", { id: "note_x" })).toBe("validation_failed: folder_id is required");
    // The services' own checks read the same way.
    expect(await toolError(client, "append_note", { filename: "a/b", text: "x" })).toMatch(/^validation_failed: filename [^:]/);
    expect(await noteCount()).toBe(0);
  });

  test("a tool hidden from a token says why when called by name; an unknown tool is a protocol error", async () => {
    h = await harness();
    const base = serve();
    const a = await h.account("dev");
    const readOnly = await connect(base, await h.token(a, ["read"]));
    expect(await toolError(readOnly, "append_note", { filename: "x.log", text: "y" })).toBe("insufficient_scope: this token lacks the append scope");
    expect(await toolError(readOnly, "create_note", { title: "t", plain_body: "b" })).toBe("insufficient_scope: this token lacks the write scope");
    // The scope is checked first: bad arguments to a refused tool do not reveal its schema.
    expect(await toolError(readOnly, "create_note", {})).toBe("insufficient_scope: this token lacks the write scope");
    const appendOnly = await connect(base, await h.token(a, ["append"]));
    expect(await toolError(appendOnly, "read_note", { id: "note_x" })).toBe("insufficient_scope: this token lacks the read scope");
    // The dev plan allows three tokens: the pinned one belongs to a second account.
    const b = await h.account("dev");
    const full = await h.token(b);
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/pinned.log/append", { token: full, body: { text: "x" } })).json();
    const pinned = await connect(base, await h.token(b, ["read", "write"], { noteId: id }));
    expect(await toolError(pinned, "list_notes")).toBe("insufficient_scope: a token pinned to one note cannot list notes");
    expect(await toolError(pinned, "create_folder", { name: "f" })).toBe("insufficient_scope: a token pinned to one note cannot manage folders");
    expect(await noteCount()).toBe(1);
    expect((await h.deps.db.select({ n: count() }).from(folders).where(eq(folders.name, "f")))[0]!.n).toBe(0);

    const unknown = await readOnly.callTool({ name: "no_such_tool", arguments: {} }).then(
      (r) => ({ answered: r }),
      (e: { code?: number; message?: string }) => ({ code: e.code, message: e.message }),
    );
    expect(unknown).toMatchObject({ code: -32602, message: expect.stringContaining("Tool no_such_tool not found") });
  });

  test("a free account reads, but its writes are refused with plan_required", async () => {
    h = await harness();
    const base = serve();
    const a = await h.account("free");
    // A free account's only API token comes with the trial; agent writes still need a paid plan.
    await h.deps.db.update(workspaces).set({ state: "trial", trialEndsAt: h.clock.now() + 86_400_000 }).where(eq(workspaces.id, a.workspaceId));
    const token = await h.token(a);
    const client = await connect(base, token);
    expect((await tool(client, "list_notes")).total).toBe(0);
    expect(await toolError(client, "append_note", { filename: "x.log", text: "y" })).toStartWith("plan_required:");
    expect(await toolError(client, "create_folder", { name: "x" })).toStartWith("plan_required:");
  });

  test("a foreign note id is not found, like a missing one", async () => {
    h = await harness();
    const base = serve();
    const other = await h.token(await h.account("dev"));
    const { id } = await (await h.request("POST", "/api/v1/notes", { token: other, body: { note: { title: "secret" } } })).json();
    const client = await connect(base, await h.token(await h.account("dev")));
    const foreign = await toolError(client, "read_note", { id });
    const missing = await toolError(client, "read_note", { id: "note_missing" });
    expect(foreign).toBe("not_found: note not found");
    expect(missing).toBe(foreign);
    expect(await toolError(client, "delete_note", { id })).toStartWith("not_found:");
  });

  test("tool calls count against the token's rate buckets", async () => {
    h = await harness();
    const base = serve();
    const client = await connect(base, await h.token(await h.account("dev")));
    for (let i = 0; i < 60; i++) await tool(client, "create_folder", { name: `f${i}` }).catch(() => {});
    expect(await toolError(client, "create_folder", { name: "one more" })).toStartWith("rate_limited:");
  });

  test("without a token: 401 pointing at the protected resource metadata; an origin off the operator's allowlist: 403", async () => {
    h = await harness();
    const base = serve();
    const res = await fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const token = await h.token(await h.account("dev"));
    h.deps.config.mcpAllowedOrigins = new Set(["https://ide.example"]);
    const cross = await fetch(`${base}/mcp`, { method: "POST", headers: { authorization: `Bearer ${token}`, origin: "https://evil.example", "content-type": "application/json" }, body: "{}" });
    expect(cross.status).toBe(403);
    expect(cross.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("the allowlist holds against DNS rebinding: a Host naming the calling site does not make its origin this server's own", async () => {
    h = await harness();
    const base = serve();
    const token = await h.token(await h.account("dev"));
    h.deps.config.mcpAllowedOrigins = new Set(["https://ide.example"]);
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    // A page on evil.example whose name was rebound to this server: the browser sends its own name as Host and Origin.
    const post = (origin: string, host?: string) =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, origin, ...(host ? { host } : {}), "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: initialize,
      });
    const port = new URL(base).port;
    for (const baseUrl of [base, null]) {
      h.deps.config.baseUrl = baseUrl;
      const rebound = await post(`http://evil.example:${port}`, `evil.example:${port}`);
      expect([baseUrl, rebound.status]).toEqual([baseUrl, 403]);
      await rebound.body?.cancel();
    }
    // The configured origin of this server stays allowed, and so does a listed one.
    h.deps.config.baseUrl = base;
    for (const origin of [base, "https://ide.example"]) {
      const res = await post(origin);
      expect([origin, res.status]).toEqual([origin, 200]);
      await res.body?.cancel();
    }
  });

  test("outside a session, GET and DELETE /mcp answer 405 with Allow: POST, with or without a token: no stream to open or session to end", async () => {
    h = await harness();
    const base = serve();
    const token = await h.token(await h.account("dev"));
    for (const method of ["GET", "DELETE"]) {
      for (const authorization of [`Bearer ${token}`, undefined]) {
        const res = await fetch(`${base}/mcp`, { method, headers: { accept: "text/event-stream", ...(authorization ? { authorization } : {}) } });
        expect([method, res.status, res.headers.get("allow")]).toEqual([method, 405, "POST"]);
        expect(res.headers.get("content-type") ?? "").not.toContain("text/event-stream");
        await res.body?.cancel();
      }
    }
  });

  test("the SDK's client connected for a few seconds opens no polling loop: one GET (its session's event stream) and no more", async () => {
    h = await harness();
    const base = serve();
    const client = await connect(base, await h.token(await h.account("dev")));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await Bun.sleep(3500);
    const gets = seen.filter((r) => r === "GET /mcp");
    expect(gets.length).toBeLessThanOrEqual(1);
    expect(seen.filter((r) => r === "DELETE /mcp")).toEqual([]);
    // Still usable after the wait.
    expect((await tool(client, "list_notes")).total).toBe(0);
  });

  test("initialize advertises what the server does: tools, resources with subscribe, prompts and completions, no listChanged", async () => {
    h = await harness();
    const base = serve();
    const client = await connect(base, await h.token(await h.account("dev")));
    const caps = client.getServerCapabilities();
    expect(caps?.tools).toBeDefined();
    expect(caps?.tools?.listChanged).not.toBe(true);
    expect(caps?.resources).toEqual({ subscribe: true, listChanged: false });
    expect(caps?.prompts).toEqual({ listChanged: false });
    expect(caps?.completions).toEqual({});
  });

  test("tools advertise the REST API's own limits: title, folder name and page size", async () => {
    h = await harness();
    const base = serve();
    const client = await connect(base, await h.token(await h.account("dev"), ["read", "write"]));
    const { tools } = await client.listTools();
    const field = (name: string, key: string) => (tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, Record<string, unknown>>)[key]!;
    expect(field("create_note", "title").maxLength).toBe(TITLE_MAX_CHARS);
    expect(field("update_note", "title").maxLength).toBe(TITLE_MAX_CHARS);
    expect(field("create_folder", "name").maxLength).toBe(FOLDER_NAME_MAX_CHARS);
    expect(field("rename_folder", "name").maxLength).toBe(FOLDER_NAME_MAX_CHARS);
    expect(field("list_notes", "limit").maximum).toBe(MAX_LIMIT);
  });
});
