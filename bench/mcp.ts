/**
 * What a hosted MCP tool call costs beside the same read over REST, on the compiled binary with
 * wrk: `list_folders` through /mcp at revision 2025-11-25 (one POST, a fresh server answering it)
 * and at 2026-07-28 (the request carries its revision and capabilities in _meta), against
 * GET /api/v1/folders. Rounds alternate the three so the VM's drift falls on all alike; the
 * figures are medians and ratios to REST within the run.
 *
 *   bun bench/mcp.ts                       # BIN=dist/notestream ROUNDS=3 SECONDS=5 CONNECTIONS=10
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { provision, ROOT, startServer, stop, tmp } from "./lib";

const bin = process.env.BIN ?? join(ROOT, "dist/notestream");
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 5);
const connections = Number(process.env.CONNECTIONS ?? 10);

const dataDir = join(tmp, "mcp");
const token = provision(bin, dataDir);
const server = await startServer(bin, dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};
const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_folders", arguments: {} } };
const cases: { name: string; method: "GET" | "POST"; path: string; headers: Record<string, string>; body?: unknown }[] = [
  { name: "REST GET /api/v1/folders", method: "GET", path: "/api/v1/folders", headers: {} },
  {
    name: "MCP 2025-11-25 tools/call list_folders",
    method: "POST",
    path: "/mcp",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: call,
  },
  {
    name: "MCP 2026-07-28 tools/call list_folders",
    method: "POST",
    path: "/mcp",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "list_folders" },
    body: { ...call, params: { ...call.params, _meta: meta } },
  },
];

/**
 * Each case checked by hand first: a benchmark of error answers measures nothing. A build from
 * before 2026-07-28 (BIN of an older commit, for a before/after) answers that case with an error:
 * it is reported as not served and left out.
 */
const served = new Set<number>();
for (const [k, c] of cases.entries()) {
  const res = await fetch(server.base + c.path, { method: c.method, headers: { authorization: `Bearer ${token}`, ...c.headers }, body: c.body ? JSON.stringify(c.body) : undefined });
  const text = await res.text();
  if (res.status === 200 && text.includes("Inbox") && !text.includes('"isError":true')) served.add(k);
  else if (k === 0) throw new Error(`${c.name}: ${res.status} ${text.slice(0, 300)}`);
  else console.log(`${c.name}: not served by this build (${res.status} ${text.slice(0, 120)})`);
}

function run(c: (typeof cases)[number]): { rps: number; p50: number; p99: number } {
  const script = join(tmp, `mcp-${Math.random().toString(36).slice(2)}.lua`);
  const lines = [`wrk.method = "${c.method}"`, `wrk.headers["Authorization"] = "Bearer ${token}"`, ...Object.entries(c.headers).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`)];
  if (c.body) lines.push(`wrk.body = [[${JSON.stringify(c.body)}]]`);
  writeFileSync(script, lines.join("\n"));
  const r = Bun.spawnSync(["wrk", "-t2", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, server.base + c.path], { stdout: "pipe" });
  const out = r.stdout.toString();
  if (/Non-2xx/.test(out)) throw new Error(`${c.name}: non-2xx answers\n${out}`);
  const ms = (t: string) => {
    const m = /([\d.]+)(us|ms|s)/.exec(t)!;
    return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
  };
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), p50: ms(/^\s+50%\s+(\S+)\s*$/m.exec(out)![1]!), p99: ms(/^\s+99%\s+(\S+)\s*$/m.exec(out)![1]!) };
}

const results = cases.map(() => [] as { rps: number; p50: number; p99: number }[]);
for (let i = 0; i < rounds; i++) {
  const order = i % 2 ? [...cases.keys()].reverse() : [...cases.keys()];
  for (const k of order) if (served.has(k)) results[k]!.push(run(cases[k]!));
}
await stop(server.proc);

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const rest = median(results[0]!.map((r) => r.rps));
console.log(`| case | req/s | p50 | p99 | ratio to REST |\n|---|---|---|---|---|`);
cases.forEach((c, k) => {
  if (!served.has(k)) return;
  const rps = median(results[k]!.map((r) => r.rps));
  const range = results[k]!.map((r, i) => r.rps / results[0]![i]!.rps);
  console.log(
    `| ${c.name} | ${Math.round(rps).toLocaleString("en")} | ${median(results[k]!.map((r) => r.p50)).toFixed(2)} ms | ${median(results[k]!.map((r) => r.p99)).toFixed(2)} ms | ${(rps / rest).toFixed(2)} (rounds ${Math.min(...range).toFixed(2)}-${Math.max(...range).toFixed(2)}) |`,
  );
});
console.log(`\n${rounds} rounds of ${seconds} s, ${connections} connections, ${bin}`);
