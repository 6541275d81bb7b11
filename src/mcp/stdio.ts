import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { RestBackend } from "./rest";
import { buildMcpServer } from "./server";

/**
 * `notestream mcp`: MCP over stdio for local AI clients, calling a notestream server's REST API
 * (NOTESTREAM_URL) with an API token (NOTESTREAM_TOKEN). Stdout carries the protocol only.
 */
export async function runStdio(env: Record<string, string | undefined> = process.env): Promise<void> {
  const token = env.NOTESTREAM_TOKEN?.trim();
  if (!token) throw new Error("NOTESTREAM_TOKEN is not set: create a token (notestream token create …) and put it in the MCP client's configuration");
  const url = env.NOTESTREAM_URL?.trim() || "http://localhost:8080";
  const backend = new RestBackend(url, token);
  const caps = await backend.capabilities().catch((e: Error) => {
    throw new Error(`cannot use the token at ${url}: ${e.message}`);
  });
  const server = buildMcpServer(backend, caps);
  await server.connect(new StdioServerTransport());
  await new Promise<void>((resolve) => process.stdin.on("close", () => resolve()));
}
