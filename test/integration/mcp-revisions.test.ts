/**
 * Which protocol revision each client speaks, as the hosted endpoint counts it
 * (notestream_mcp_requests_total{revision}): the SDK's v1 client and the v2 client by default
 * open with initialize at 2025-11-25; the v2 client pinned or in auto mode speaks 2026-07-28.
 */
import { afterEach, expect, test } from "bun:test";
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { buildHandler } from "../../src/app";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
let server: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  server?.stop(true);
  server = undefined;
  await h.close();
});

async function counts(): Promise<Record<string, number>> {
  const text = await h.deps.metrics.text();
  return Object.fromEntries([...text.matchAll(/^notestream_mcp_requests_total\{revision="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

test("requests are counted by the revision their client speaks; an unknown revision is 'other', never a new series", async () => {
  h = await harness();
  const handle = buildHandler(h.deps);
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r, srv) => handle(r, srv.requestIP(r)?.address), idleTimeout: 0 });
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  const token = await h.token(await h.account("dev"), ["read", "write"]);
  const requestInit = { headers: { authorization: `Bearer ${token}` } };

  const v1 = new V1Client({ name: "v1", version: "1" });
  await v1.connect(new V1Transport(url, { requestInit }));
  await v1.listTools();
  await v1.close();
  const afterV1 = await counts();
  expect(afterV1["2025-11-25"]).toBeGreaterThanOrEqual(2); // initialize, then tools/list under the header
  expect(afterV1["2026-07-28"]).toBeUndefined();

  const legacyV2 = new V2Client({ name: "v2-default", version: "1" });
  await legacyV2.connect(new V2Transport(url, { requestInit }));
  expect(legacyV2.getProtocolEra()).toBe("legacy");
  await legacyV2.close();

  for (const mode of [{ pin: "2026-07-28" } as const, "auto" as const]) {
    const modern = new V2Client({ name: "v2", version: "1" }, { versionNegotiation: { mode } });
    await modern.connect(new V2Transport(url, { requestInit }));
    expect(modern.getProtocolEra()).toBe("modern");
    await modern.listTools();
    await modern.close();
  }
  const afterV2 = await counts();
  expect(afterV2["2026-07-28"]).toBeGreaterThanOrEqual(4); // discover and tools/list, twice
  expect(afterV2["2025-11-25"]).toBeGreaterThan(afterV1["2025-11-25"]!);

  const raw = (protocolVersion: string) =>
    fetch(url, {
      method: "POST",
      headers: { ...requestInit.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
    });
  expect((await raw("2024-11-05")).status).toBe(200);
  expect((await raw("1999-01-01")).status).toBe(200); // the server answers with the revision it prefers
  const last = await counts();
  expect(last["2024-11-05"]).toBe(1);
  expect(last.other).toBe(1);
  expect(Object.keys(last).sort()).toEqual(["2024-11-05", "2025-11-25", "2026-07-28", "other"]);
});
