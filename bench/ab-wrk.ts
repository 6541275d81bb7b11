/**
 * Two builds (or two settings) of the server under wrk, side by side: both run at once on their
 * own data dirs, and short wrk runs alternate between them, so the VM's drift (a third within
 * minutes) falls on both alike. Prints each pair's ratio and the median.
 *
 *   bun bench/ab-wrk.ts /tmp/base/dist/notestream dist/notestream
 *   AB_ENV_B=NOTESTREAM_LOG_REQUESTS=false bun bench/ab-wrk.ts dist/notestream dist/notestream
 *
 * Environment: AB_PAIRS (default 8), AB_SECONDS per run (default 3), AB_SYNC (FULL),
 * AB_ENV_A / AB_ENV_B (extra NAME=value,NAME=value for one side).
 */
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [binA, binB] = process.argv.slice(2).map((p) => resolve(p));
if (!binA || !binB) {
  console.error("usage: bun bench/ab-wrk.ts <binary A> <binary B>");
  process.exit(2);
}
const PAIRS = Number(process.env.AB_PAIRS ?? 8);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);
const tmp = mkdtempSync(join(tmpdir(), "notestream-ab-"));
const procs: Subprocess[] = [];
process.on("exit", () => procs.forEach((p) => p.kill("SIGKILL")));

function envList(raw: string | undefined): Record<string, string> {
  return Object.fromEntries((raw ?? "").split(",").filter(Boolean).map((kv) => kv.split("=", 2) as [string, string]));
}

function cli(bin: string, dataDir: string, args: string[]): string {
  const r = Bun.spawnSync([bin, ...args], { env: { ...process.env, NOTESTREAM_DATA_DIR: dataDir }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${bin} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString().trim();
}

async function start(label: string, bin: string, env: Record<string, string>) {
  const dataDir = join(tmp, label);
  cli(bin, dataDir, ["account", "create", "--email", "ab@example.com", "--plan", "dev"]);
  const token = cli(bin, dataDir, ["token", "create", "--email", "ab@example.com", "--scope", "read,write"]);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc = Bun.spawn([bin, "serve"], {
    env: {
      ...process.env,
      NOTESTREAM_DATA_DIR: dataDir,
      NOTESTREAM_PORT: String(port),
      NOTESTREAM_HOST: "127.0.0.1",
      NOTESTREAM_LIMIT_PROFILE: "unlimited",
      NOTESTREAM_SYNCHRONOUS: process.env.AB_SYNC ?? "FULL",
      ...env,
    },
    stdout: Bun.file(join(tmp, `${label}.log`)),
    stderr: "inherit",
  });
  procs.push(proc);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/up`)).ok) break;
    } catch {}
    if (i > 500) throw new Error(`${label} did not start`);
    await Bun.sleep(10);
  }
  const script = join(tmp, `${label}.lua`);
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      'wrk.headers["Content-Type"] = "application/json"',
      `wrk.headers["Authorization"] = "Bearer ${token}"`,
      `wrk.body = '{"text":"${"x".repeat(100)}"}'`,
    ].join("\n"),
  );
  return () => {
    const r = Bun.spawnSync(["wrk", "-t2", "-c50", `-d${SECONDS}s`, "-s", script, `${base}/api/v1/notes/by-filename/ab.log/append`], { stdout: "pipe" });
    return Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout.toString())![1]);
  };
}

const runA = await start("a", binA, envList(process.env.AB_ENV_A));
const runB = await start("b", binB, envList(process.env.AB_ENV_B));
const ratios: number[] = [];
for (let i = 0; i < PAIRS; i++) {
  // Alternate which goes first, so a drift within a pair favours neither.
  let a: number;
  let b: number;
  if (i % 2) {
    a = runA();
    b = runB();
  } else {
    b = runB();
    a = runA();
  }
  ratios.push(b / a);
  console.log(`pair ${i + 1}: A ${Math.round(a)} req/s, B ${Math.round(b)} req/s, B/A ${(b / a).toFixed(3)}`);
}
const sorted = [...ratios].sort((x, y) => x - y);
console.log(`B/A median ${sorted[sorted.length >> 1]!.toFixed(3)}, B faster in ${ratios.filter((r) => r > 1).length} of ${PAIRS} pairs`);
for (const p of procs) p.kill("SIGTERM");
await Promise.all(procs.map((p) => p.exited));
rmSync(tmp, { recursive: true, force: true });
