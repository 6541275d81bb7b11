// `make mcp-conformance`: the official MCP conformance suite (server mode) and the MCP Inspector's
// CLI against notestream, over the hosted endpoint (/mcp, Bearer token) and over stdio
// (`notestream mcp`), for each protocol revision the suite has scenarios for. Prints a table and
// exits 1 when anything that applies fails. docs/MCP-CONFORMANCE.md says what applies and why.
import { join } from "node:path";
import { startAuthProxy } from "./auth-proxy";
import { runInspector, type InspectorRunner } from "./inspector";
import { SCENARIOS_2025_11_25, SCENARIOS_2026_07_28, type Scenario, type Transport } from "./scenarios";
import { startService } from "./service";
import { startStdioBridge } from "./stdio-bridge";
import { runSuite, type Outcome } from "./suite";
import { CONFORMANCE, CONFORMANCE_NEXT, ensureTool, INSPECTOR, INSPECTOR_CLI, runtimeFor } from "./tools";

/** An origin browser clients may call from (the Inspector's web UI), so the service runs with an allowlist. */
const ALLOWED_ORIGIN = "http://localhost:6274";

/** How much of an outcome's detail the table prints. */
const DETAIL_CHARS = 600;

interface Section {
  title: string;
  outcomes: Outcome[];
}

/** Whether the service answers server/discover for 2026-07-28 (the stateless revision). */
async function serves2026(base: string, token: string): Promise<boolean> {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const r = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } }),
  });
  const text = await r.text();
  // An event stream carries the answer in a data: line.
  const body = text.startsWith("{") ? text : (text.split("\n").find((l) => l.startsWith("data: {"))?.slice(6) ?? "");
  try {
    return (JSON.parse(body)?.result?.supportedVersions ?? []).includes("2026-07-28");
  } catch {
    return false;
  }
}

function print(sections: Section[]): { passed: number; failed: number; skipped: number } {
  let [passed, failed, skipped] = [0, 0, 0];
  for (const s of sections) {
    console.log(`\n== ${s.title}`);
    const order = { fail: 0, pass: 1, "n/a": 2 } as const;
    for (const o of [...s.outcomes].sort((a, b) => order[a.verdict] - order[b.verdict] || (a.verdict === "n/a" ? a.name.localeCompare(b.name) : 0))) {
      const mark = o.verdict === "pass" ? "PASS" : o.verdict === "fail" ? "FAIL" : "n/a ";
      // Failures can quote whole answers: the start says what failed, the rest is in a verbose run of the suite.
      const detail = o.detail.length > DETAIL_CHARS ? `${o.detail.slice(0, DETAIL_CHARS)}…` : o.detail;
      console.log(`  ${mark}  ${o.name}${detail ? `  (${detail})` : ""}`);
      if (o.verdict === "pass") passed++;
      else if (o.verdict === "fail") failed++;
      else skipped++;
    }
  }
  return { passed, failed, skipped };
}

async function main(): Promise<number> {
  const started = Date.now();
  const conformance = join(ensureTool(CONFORMANCE), "dist", "index.js");
  const conformanceNext = join(ensureTool(CONFORMANCE_NEXT), "dist", "index.js");
  const inspectorCli = join(ensureTool(INSPECTOR_CLI), "build");
  const inspector = join(ensureTool(INSPECTOR), "clients", "launcher", "build", "index.js");
  const suiteRuntime = runtimeFor([22, 0]);

  // The suite reaches the service through the proxy: the DNS-rebinding scenario calls from the
  // proxy's origin and expects it allowed, so the allowlist names it. No NOTESTREAM_BASE_URL: the
  // service must not take another site's Host for its own (the rebinding case).
  const proxy = startAuthProxy();
  const service = await startService({ NOTESTREAM_MCP_ALLOWED_ORIGINS: `${ALLOWED_ORIGIN},${proxy.origin}` }).catch((e) => {
    proxy.stop();
    throw e;
  });
  proxy.forwardTo(service.base, service.token);
  const bridge = startStdioBridge(service.command, service.stdioEnv);
  const sections: Section[] = [];
  try {
    const urls: Record<Transport, string> = { http: proxy.url, stdio: bridge.url };
    const revisions: { revision: string; spec: string; entry: string; args: string[]; table: Scenario[] }[] = [
      { revision: "2025-11-25", spec: CONFORMANCE, entry: conformance, args: ["--spec-version", "2025-11-25"], table: SCENARIOS_2025_11_25 },
    ];
    if (await serves2026(service.base, service.token)) {
      revisions.push({ revision: "2026-07-28", spec: CONFORMANCE_NEXT, entry: conformanceNext, args: ["--requirements", "2026-07-28"], table: SCENARIOS_2026_07_28 });
    } else {
      sections.push({ title: "conformance 2026-07-28", outcomes: [{ name: "(all scenarios)", verdict: "n/a", detail: "this build does not serve 2026-07-28 (server/discover is not answered with it)" }] });
    }
    for (const r of revisions) {
      for (const transport of ["http", "stdio"] as const) {
        const outcomes = await runSuite({ runtime: suiteRuntime, entry: r.entry, url: urls[transport], transport, extraArgs: r.args, table: r.table });
        sections.push({ title: `conformance ${r.revision}, ${transport} (${r.spec})`, outcomes });
      }
    }
    // The v1 CLI reads its own package.json relative to the working directory: run it from its build folder.
    const inspectors: InspectorRunner[] = [
      { label: INSPECTOR_CLI, slug: "inspector-v1", command: ["node", join(inspectorCli, "index.js")], cwd: inspectorCli, stdioEnvArgs: () => [] },
      {
        label: `${INSPECTOR} --cli`,
        slug: "inspector-v2",
        command: [runtimeFor([22, 19]), inspector, "--cli"],
        stdioEnvArgs: (env) => ["NOTESTREAM_URL", "NOTESTREAM_TOKEN"].flatMap((k) => ["-e", `${k}=${env[k]}`]),
      },
    ];
    for (const runner of inspectors) {
      for (const transport of ["http", "stdio"] as const) {
        sections.push({ title: `inspector, ${transport} (${runner.label})`, outcomes: await runInspector(runner, service, transport) });
      }
    }
  } finally {
    proxy.stop();
    await bridge.stop();
    await service.stop();
  }
  const { passed, failed, skipped } = print(sections);
  console.log(`\nnotestream ${process.env.MCP_CONFORMANCE_BIN ? `binary ${process.env.MCP_CONFORMANCE_BIN}` : "from source"}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`mcp-conformance: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 ? 1 : 0;
}

process.exit(await main());
