// The outside tools, pinned, installed with npm into .tools/mcp-conformance/ (kept between runs,
// removed by `make clean`), each in a folder of its own so their SDK versions never meet.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./service";

const TOOLS_DIR = join(ROOT, ".tools", "mcp-conformance");

/** The conformance suite's latest release: protocol revisions 2025-06-18 and 2025-11-25. */
export const CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16";
/** The only release with scenarios for revision 2026-07-28 (an alpha): run for that revision alone. */
export const CONFORMANCE_NEXT = "@modelcontextprotocol/conformance@0.2.0-alpha.12";
/** The Inspector's v1 CLI (the SDK's v1 client). */
export const INSPECTOR_CLI = "@modelcontextprotocol/inspector-cli@1.0.3";
/** The Inspector v2, whose --cli mode is built on the SDK's v2 client. */
export const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";

/** Installs the package when its pinned version is not there yet; returns its folder in node_modules. */
export function ensureTool(spec: string): string {
  const at = spec.lastIndexOf("@");
  const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
  const prefix = join(TOOLS_DIR, `${name.replace("/", "+")}@${version}`);
  const dir = join(prefix, "node_modules", name);
  if (!existsSync(join(dir, "package.json"))) {
    mkdirSync(prefix, { recursive: true });
    console.log(`installing ${spec} into ${prefix}`);
    // No install scripts: none of these needs one for what is run here (the Inspector's only builds its web UI).
    const r = Bun.spawnSync(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", "--ignore-scripts", "--loglevel=error", spec], {
      stdout: "inherit",
      stderr: "inherit",
      timeout: 300_000,
    });
    if (r.exitCode !== 0 || !existsSync(join(dir, "package.json"))) throw new Error(`npm install ${spec} failed (exit ${r.exitCode})`);
  }
  return dir;
}

/**
 * The runtime for a tool that wants a newer Node than the machine's: node when it is new enough,
 * else bun, which runs them (the conformance suite imports fs.globSync, Node 22 and later; the Inspector v2 asks for 22.19).
 */
export function runtimeFor(least: [major: number, minor: number]): string {
  const r = Bun.spawnSync(["node", "--version"], { stdout: "pipe", stderr: "ignore" });
  const [major = 0, minor = 0] = (/^v(\d+)\.(\d+)/.exec(r.stdout.toString()) ?? []).slice(1).map(Number);
  const newEnough = major > least[0] || (major === least[0] && minor >= least[1]);
  return r.exitCode === 0 && newEnough ? "node" : process.execPath;
}
