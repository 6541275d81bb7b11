// The service under test: `notestream serve` on a loopback port over a fresh SQLite data dir, with
// an account, a read,write API token and a few notes, so resources and prompts have something to
// show. Started as the checkout's source (`bun src/main.ts`) or as a built binary (MCP_CONFORMANCE_BIN).
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..");
const START_TIMEOUT_MS = 20_000;

/** What the checks need to know about the seeded data. */
export interface Seed {
  stream: string;
  streamLines: string[];
  editableId: string;
  editableTitle: string;
  editableBody: string;
}

export interface Service {
  base: string;
  token: string;
  seed: Seed;
  /** The command that runs `notestream …` (source or binary), for `mcp` over stdio. */
  command: string[];
  /** The environment `notestream mcp` needs to reach this service. */
  stdioEnv: Record<string, string>;
  stop: () => Promise<void>;
}

/** `notestream` as a command: the built binary when one is named, else the source under bun. */
export function notestreamCommand(): string[] {
  const bin = process.env.MCP_CONFORMANCE_BIN;
  // Absolute: the service runs in its data dir.
  return bin ? [resolve(bin)] : [process.execPath, join(ROOT, "src", "main.ts")];
}

/** The environment without the caller's NOTESTREAM_* settings (a developer's own server, token or database). */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("NOTESTREAM_")) env[k] = v;
  return { ...env, ...extra };
}

function cliOk(command: string[], args: string[], env: Record<string, string>): string {
  const r = Bun.spawnSync([...command, ...args], { env: cleanEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  if (r.exitCode !== 0) throw new Error(`notestream ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}${r.stdout.toString()}`);
  return r.stdout.toString().trim();
}

async function listeningPort(proc: Subprocess<"ignore", "pipe", "pipe">, stderr: () => string): Promise<number> {
  const decoder = new TextDecoder();
  let buf = "";
  const timer = setTimeout(() => proc.kill("SIGKILL"), START_TIMEOUT_MS);
  try {
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const j = JSON.parse(line) as { msg?: unknown; port?: unknown };
          if (j.msg === "listening" && typeof j.port === "number") return j.port;
        } catch {}
      }
    }
  } finally {
    clearTimeout(timer);
  }
  throw new Error(`notestream serve stopped before listening (within ${START_TIMEOUT_MS} ms):\n${stderr()}`);
}

async function rest(base: string, token: string, method: string, path: string, json: unknown): Promise<any> {
  const r = await fetch(`${base}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(json) });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

/** Starts the service, provisions an account and token with its own CLI and seeds notes over REST. */
export async function startService(env: Record<string, string> = {}): Promise<Service> {
  const command = notestreamCommand();
  const dataDir = mkdtempSync(join(tmpdir(), "notestream-mcp-conformance-"));
  const base = { NOTESTREAM_DATA_DIR: dataDir };
  const email = "conformance@example.com";
  cliOk(command, ["account", "create", "--email", email, "--plan", "dev"], base);
  const token = cliOk(command, ["token", "create", "--email", email, "--scope", "read,write"], base);

  const proc = Bun.spawn([...command, "serve"], {
    cwd: dataDir,
    env: cleanEnv({ ...base, NOTESTREAM_PORT: "0", NOTESTREAM_HOST: "127.0.0.1", NOTESTREAM_LOG_REQUESTS: "false", ...env }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  const stderrDone = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const stop = async () => {
    proc.kill("SIGTERM");
    await proc.exited;
    await stderrDone.catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await listeningPort(proc, () => stderr);
    // The rest of stdout (request logs are off) is drained so the pipe never fills.
    void (async () => {
      for await (const _ of proc.stdout) {
      }
    })();
    const url = `http://127.0.0.1:${port}`;
    const seed: Seed = {
      stream: "deploys.log",
      streamLines: ["deploy api v41 started", "deploy api v41 failed: health check timed out", "rollback to api v40 done"],
      editableId: "",
      editableTitle: "Runbook",
      editableBody: "Restart the api with: systemctl restart api",
    };
    for (const text of seed.streamLines) await rest(url, token, "POST", `/notes/by-filename/${encodeURIComponent(seed.stream)}/append`, { text });
    await rest(url, token, "POST", `/notes/by-filename/${encodeURIComponent("errors.log")}/append`, { text: "GET /healthz 503" });
    const note = await rest(url, token, "POST", "/notes", { note: { title: seed.editableTitle, plain_body: seed.editableBody } });
    seed.editableId = note.note?.id ?? note.id;
    return { base: url, token, seed, command, stdioEnv: cleanEnv({ NOTESTREAM_URL: url, NOTESTREAM_TOKEN: token }), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
