import { isUtf8 } from "node:buffer";
import { PassThrough, type Readable, type Writable } from "node:stream";
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type McpServer,
  type RequestId,
  type Transport,
} from "@modelcontextprotocol/server";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { ListenFollows } from "./listen";
import { RestBackend } from "./rest";
import { buildMcpServer } from "./server";
import { StreamSubscriptions } from "./subscriptions";

/** How many `subscriptions/listen` streams one stdio connection holds open at once. */
const LISTENS_PER_CONNECTION = 10;

/**
 * The SDK's stdio transport, keeping count of the requests read and not yet answered, so that the
 * end of input can wait for them: `printf … | notestream mcp` closes stdin right after its last
 * request, long before a call that goes over HTTP is answered. A `subscriptions/listen` is
 * answered only when it ends, so it is not waited for; it first goes through `listens`, which
 * follows the streams it names and keeps in its filter only those it could follow.
 */
class DrainingStdioTransport implements Transport {
  private readonly inner: StdioServerTransport;
  private readonly unanswered = new Set<RequestId>();
  private onIdle: (() => void) | null = null;
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    input: Readable,
    output: Writable,
    private readonly listens: ListenFollows,
  ) {
    this.inner = new StdioServerTransport(input, output);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCRequest(message) && message.method === "subscriptions/listen") {
        void this.listens.start(message).then((kept) => kept && this.onmessage?.(kept));
        return;
      }
      if (isJSONRPCRequest(message)) this.unanswered.add(message.id);
      // A cancelled request gets no answer at all (the SDK drops it), so it is no longer awaited.
      if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
        const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (requestId !== undefined) {
          this.answered(requestId);
          this.listens.cancel(requestId);
        }
      }
      this.onmessage?.(message);
    };
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.inner.send(message);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      if (message.id === undefined) return;
      this.answered(message.id);
      // A listen is answered when it ends: refused (too many on this connection) or ended by the
      // server. Its follows would otherwise hold the token's follow slots until the connection ends.
      this.listens.cancel(message.id);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private answered(id: RequestId): void {
    this.unanswered.delete(id);
    if (this.unanswered.size === 0) this.onIdle?.();
  }

  /** Resolves once every request read so far has had its answer written. */
  drained(): Promise<void> {
    if (this.unanswered.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.onIdle = resolve));
  }
}

/**
 * Stdin as the transport reads it: whole lines of UTF-8, the last one ended with a newline when it
 * lacks one (the SDK reads whole lines only, and a final request without its newline would be
 * dropped unanswered). A line that is not UTF-8 never reaches the SDK, which would decode it with
 * U+FFFD in place of the bytes and store that changed: `refuse` answers it instead.
 */
function linesOf(stdin: Readable, refuse: (line: Buffer) => void): { lines: PassThrough; ended: Promise<void> } {
  const lines = new PassThrough();
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  let pending: Buffer = Buffer.alloc(0);
  const pass = (line: Buffer) => (isUtf8(line) ? lines.write(line) : refuse(line));
  stdin.on("data", (chunk: Buffer) => {
    let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    let nl: number;
    while ((nl = data.indexOf(0x0a)) !== -1) {
      pass(data.subarray(0, nl + 1));
      data = data.subarray(nl + 1);
    }
    pending = Buffer.from(data);
  });
  stdin.on("end", () => {
    if (pending.length > 0) pass(Buffer.concat([pending, Buffer.from("\n")]));
    end();
  });
  stdin.on("error", (e) => {
    lines.destroy(e);
    end();
  });
  // The transport is not told: the SDK's closes itself at the end of its input, and then writes no
  // answer to the requests still running.
  return { lines, ended };
}

/** JSON-RPC's answer to a line that is not UTF-8: a parse error, to the request's id when one can be read. */
function notUtf8Answer(line: Buffer): string {
  let id: RequestId | null = null;
  try {
    const parsed = JSON.parse(line.toString("utf8")) as { id?: unknown };
    if (typeof parsed.id === "string" || typeof parsed.id === "number") id = parsed.id;
  } catch {}
  return `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32700, message: "Parse error: the message is not valid UTF-8" } })}\n`;
}

/** Resolves once everything written to stdout so far has been handed to the OS; rejects when stdout is broken. */
function flushed(stdout: Writable): Promise<void> {
  return new Promise((resolve, reject) => stdout.write("", (e) => (e ? reject(e) : resolve())));
}

/**
 * `notestream mcp`: MCP over stdio for local AI clients, calling a notestream server's REST API
 * (NOTESTREAM_URL) with an API token (NOTESTREAM_TOKEN). Stdout carries the protocol only. At the
 * end of input it answers every request already read, then returns; a tool that fails is an
 * answer like any other, so only a broken stdout makes it fail.
 */
export async function runStdio({ url, token }: { url: string; token: string }): Promise<void> {
  if (!token) throw new Error("NOTESTREAM_TOKEN is not set: create a token (notestream token create …) and put it in the MCP client's configuration");
  const backend = new RestBackend(url, token);
  const caps = await backend.capabilities().catch((e: Error) => {
    throw new Error(`cannot use the token at ${url}: ${e.message}`);
  });
  // Appends to a subscribed stream reach the server's REST API from anywhere: it is followed there.
  // The instance serving the connection says so: unsolicited on 2025-11-25 (resources/subscribe),
  // on the listen streams that asked for it on 2026-07-28 (the SDK routes it there).
  let serving: McpServer | null = null;
  const updated = (uri: string) => void serving?.server.sendResourceUpdated({ uri }).catch(() => {});
  const subscriptions = new StreamSubscriptions(updated);
  const listens = new ListenFollows(backend, updated);
  const input = linesOf(process.stdin, (line) => process.stdout.write(notUtf8Answer(line)));
  const transport = new DrainingStdioTransport(input.lines, process.stdout, listens);
  // A reader that went away (EPIPE) would leave answers pending forever: that is the process failing.
  const broken = new Promise<never>((_, reject) => process.stdout.once("error", reject));
  broken.catch(() => {}); // once the answers are out, a later EPIPE has nothing left to fail
  // One factory for both revisions: the SDK builds an instance per connection (and one for a
  // server/discover probe it drops when the client falls back to initialize).
  const handle = serveStdio(() => (serving = buildMcpServer(backend, caps, subscriptions)), { transport, maxSubscriptions: LISTENS_PER_CONNECTION });
  await Promise.race([
    (async () => {
      await input.ended;
      await transport.drained();
      await flushed(process.stdout);
    })(),
    broken,
  ]);
  subscriptions.close();
  listens.close();
  await handle.close();
}
