// One run of the conformance suite's server mode against a URL, read back scenario by scenario
// from the checks.json files it writes, and judged against the table of what applies.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Scenario, Transport } from "./scenarios";

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

export interface Outcome {
  name: string;
  /** pass / fail: an applicable scenario; n/a: one that does not apply (its own result is in `detail`). */
  verdict: "pass" | "fail" | "n/a";
  detail: string;
}

/** A whole suite run, bounded: scenarios have timeouts of their own, this stops a suite that hangs regardless. */
const SUITE_TIMEOUT_MS = 600_000;
const SCENARIO_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/;

/** A check that failed only for want of a reference-server fixture the table names. */
const untestable = (c: Check, fixtureChecks: string[]) => c.status === "FAILURE" && fixtureChecks.includes(c.id) && /^Not testable/.test(c.errorMessage ?? "");

function summarise(checks: Check[], fixtureChecks: string[] = []): { passed: number; failed: number; warnings: number; untestable: number; errors: string[] } {
  const failed = checks.filter((c) => c.status === "FAILURE" && !untestable(c, fixtureChecks));
  return {
    passed: checks.filter((c) => c.status === "SUCCESS").length,
    failed: failed.length,
    warnings: checks.filter((c) => c.status === "WARNING").length,
    untestable: checks.filter((c) => untestable(c, fixtureChecks)).length,
    errors: failed.map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`),
  };
}

/**
 * Runs every scenario the suite has (`extraArgs` picks the revision) and judges each: an applicable
 * one passes with at least one check passed and none failed; a scenario missing from the table,
 * or one the table names that the suite did not run, fails the run (the table is out of date).
 */
export async function runSuite(opts: { runtime: string; entry: string; url: string; transport: Transport; extraArgs: string[]; table: Scenario[] }): Promise<Outcome[]> {
  const out = mkdtempSync(join(tmpdir(), "notestream-conformance-results-"));
  try {
    // Not spawnSync: the URL is served by this process (the auth proxy, the stdio bridge).
    const proc = Bun.spawn([opts.runtime, opts.entry, "server", "--url", opts.url, "-o", out, ...opts.extraArgs], { stdout: "pipe", stderr: "pipe", timeout: SUITE_TIMEOUT_MS });
    const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const seen = new Map<string, Check[]>();
    for (const dir of readdirSync(out)) {
      const name = SCENARIO_DIR.exec(dir)?.[1];
      if (!name) continue;
      const file = join(out, dir, "checks.json");
      // A scenario's folder is made before it runs: without its checks it never finished.
      const unfinished: Check = { id: name, status: "FAILURE", errorMessage: `did not finish (the suite exited ${code}): ${stderr.slice(-500)}` };
      seen.set(name, existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Check[]) : [unfinished]);
    }
    if (seen.size === 0) return [{ name: "(suite)", verdict: "fail", detail: `the suite ran no scenario (exit ${code}): ${stderr.slice(-2000)}` }];
    const outcomes: Outcome[] = [];
    for (const [name, checks] of seen) {
      const entry = opts.table.find((t) => t.name === name);
      const s = summarise(checks, entry?.fixtureChecks);
      const counts = `${s.passed} passed, ${s.failed} failed${s.warnings ? `, ${s.warnings} warnings` : ""}${s.untestable ? `, ${s.untestable} need a fixture tool` : ""}`;
      if (!entry) {
        outcomes.push({ name, verdict: "fail", detail: `not in the table of scenarios (scripts/mcp-conformance/scenarios.ts): classify it (${counts})` });
      } else if (!entry.applies.includes(opts.transport)) {
        outcomes.push({ name, verdict: "n/a", detail: `${entry.why} [ran: ${counts}]` });
      } else if (s.failed === 0 && s.passed > 0) {
        outcomes.push({ name, verdict: "pass", detail: counts });
      } else {
        outcomes.push({ name, verdict: "fail", detail: `${counts}: ${s.errors.join("; ") || "no check passed"}` });
      }
    }
    for (const entry of opts.table) {
      if (!seen.has(entry.name) && entry.applies.includes(opts.transport)) outcomes.push({ name: entry.name, verdict: "fail", detail: "the suite did not run it" });
    }
    return outcomes;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
