/**
 * `notestream mcp` over stdio, driven by the MCP SDK's own Client: the compiled binary is the MCP
 * server, talking to another instance of the binary serving the REST API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { buildBinary, childEnv, cleanup, cliOk, getNote, provision, startServer, tempDir, type RunningServer } from "../helpers/binary";
import { exerciseAllTools, toolError } from "../helpers/mcp";

let BIN = "";
let server: RunningServer;
let dataDir = "";
let token = "";
const clients: Client[] = [];

beforeAll(async () => {
  BIN = buildBinary();
  dataDir = tempDir("data");
  ({ token } = provision(dataDir));
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
}, 90_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.stop("SIGTERM").catch(() => {});
  await cleanup();
});

async function connect(withToken: string): Promise<Client> {
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["mcp"],
    env: childEnv({ NOTESTREAM_URL: server.base, NOTESTREAM_TOKEN: withToken }),
    stderr: "pipe",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe("notestream mcp (stdio)", () => {
  test("every tool, against the REST API of a running server", async () => {
    const client = await connect(token);
    await exerciseAllTools(client, async (filename) => (await getNote(server.base, token, filename)).plain_body);
  }, 30_000);

  test("a read-only token lists no write tools", async () => {
    const readOnly = cliOk(dataDir, ["token", "create", "--email", "ops@example.com", "--scope", "read"]).stdout.trim();
    const client = await connect(readOnly);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["list_folders", "list_notes", "read_note"]);
    expect(await toolError(client, "read_note", { id: "note_missing" })).toStartWith("not_found:");
  }, 30_000);

  test("without NOTESTREAM_TOKEN it exits with a clear message", () => {
    const r = Bun.spawnSync([BIN, "mcp"], { env: childEnv({ NOTESTREAM_URL: server.base }), stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 10_000 });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.toString()).toContain("NOTESTREAM_TOKEN is not set");
    expect(r.stdout.toString()).toBe("");
  });
});
