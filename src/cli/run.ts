// `notestream run`: a cron job wrapped so that its start, its end and its status reach a stream,
// through the same client as the other client commands (client.ts).
import { basename } from "node:path";
import { UsageError } from "./args";
import { byFilename, call, clientFrom } from "./client";

/**
 * `run [--stream FILENAME] [--quiet] -- COMMAND [ARGS…]`: the cron wrapper. A start line (status
 * start), the command with its output passed through, then `ok in 42s` (status ok) or
 * `FAILED (exit 3) in 42s: <its last stderr lines, as one line>` (status fail); exits with the
 * command's own status. The job always runs: a server that cannot be reached is reported on
 * stderr, never a reason to skip the job.
 */
export async function runCommand(argv: string[], err: (l: string) => void): Promise<number> {
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) throw new UsageError("run needs -- COMMAND [ARGS…]");
  const { client, rest } = clientFrom(argv.slice(0, split));
  const command = argv.slice(split + 1);
  let stream = `${basename(command[0]!)}.log`;
  let quiet = false;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "--stream" && rest[i + 1] !== undefined) stream = rest[++i]!;
    else if (rest[i] === "--quiet") quiet = true;
    else throw new UsageError(rest[i] === "--stream" ? "--stream needs a value" : `unexpected argument "${rest[i]}"`);
  }
  const signal = (status: "start" | "ok" | "fail", text: string) =>
    call(client, "POST", `${byFilename(stream)}/append`, { text, status }).catch((e: Error) => err(`notestream run: ${e.message}`));

  await signal("start", `start: ${command.join(" ").slice(0, 500)}`);
  const started = performance.now();
  let proc;
  try {
    proc = Bun.spawn(command, { stdin: "inherit", stdout: quiet ? "ignore" : "inherit", stderr: "pipe" });
  } catch (e) {
    await signal("fail", `FAILED (cannot start) in 0s: ${(e as Error).message}`);
    err(`notestream run: cannot start ${command[0]}: ${(e as Error).message}`);
    return 127;
  }
  const tail = new StderrTail();
  for await (const chunk of proc.stderr) {
    if (!quiet) process.stderr.write(chunk);
    tail.push(chunk);
  }
  const code = await proc.exited;
  const took = duration((performance.now() - started) / 1000);
  if (code === 0) {
    await signal("ok", `ok in ${took}`);
    return 0;
  }
  const why = proc.signalCode ? `signal ${proc.signalCode}` : `exit ${code}`;
  const last = tail.oneLine();
  await signal("fail", `FAILED (${why}) in ${took}${last ? `: ${last}` : ""}`);
  return proc.signalCode ? 128 + (SIGNALS[proc.signalCode] ?? 0) : code;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGABRT: 6, SIGPIPE: 13 };

/** 42s, 3m05s, 2h07m. */
function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** The end of a command's stderr, kept small however much it writes. */
class StderrTail {
  private text = "";
  private readonly decoder = new TextDecoder();
  push(chunk: Uint8Array) {
    this.text = (this.text + this.decoder.decode(chunk, { stream: true })).slice(-4096);
  }
  /** The last five non-empty lines, joined with " | " and cut to 300 characters. */
  oneLine(): string {
    const lines = this.text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).slice(-5);
    const joined = lines.join(" | ");
    return joined.length > 300 ? `…${joined.slice(-299)}` : joined;
  }
}
