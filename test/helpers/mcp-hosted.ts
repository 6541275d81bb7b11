// The hosted MCP endpoint as the tests reach it: the app on a real loopback port, so an SDK's HTTP
// client talks to it as to any server, and the REST API the tests write notes through.
import { expect } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { buildHandler } from "../../src/app";
import type { Harness } from "./harness";
import type { Rest } from "./mcp-resources";

/** Serves the app of `h`; the base address is also the public one, which the 401 challenge names. */
export function serveOnLoopback(h: Harness): { server: ReturnType<typeof Bun.serve>; base: string } {
  const handle = buildHandler(h.deps);
  // No idle timeout: an event stream (a listen, a session's GET) may stay quiet for long.
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r, srv) => handle(r, srv.requestIP(r)?.address), idleTimeout: 0 });
  const base = `http://127.0.0.1:${server.port}`;
  h.deps.config.baseUrl = base;
  return { server, base };
}

/** The REST API at `base` with `token`. */
export function restOf(base: string, token: string): Rest {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect(res.ok).toBe(true);
    return (await res.json()) as any;
  };
  return {
    append: (filename, text) => call("POST", `/notes/by-filename/${encodeURIComponent(filename)}/append`, { text }),
    createNote: (title, plain_body) => call("POST", "/notes", { note: { title, plain_body } }),
    lines: async (filename) => (await call("GET", `/notes/by-filename/${encodeURIComponent(filename)}/lines?last=1000`)).lines,
  };
}

/** The v1 SDK's client on `base`/mcp with `token` as its Bearer, kept in `clients` for the test's clean-up. */
export async function connectV1(base: string, token: string, name: string, clients: Client[]): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}
