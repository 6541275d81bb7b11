// The conformance suite's server mode speaks Streamable HTTP only. To run its scenarios against
// `notestream mcp` (stdio), this loopback bridge gives each `initialize` (2025-11-25) a child
// `notestream mcp` of its own, a session. A stdio connection keeps the revision of its first
// message, so requests outside a session that name 2026-07-28 in their _meta share one child, as one
// 2026-07-28 client's requests would, and any other such request gets a child of its own. It writes each POSTed JSON-RPC message to the child's stdin as one line and answers a
// request with the child's answer to it, as JSON. It adds nothing of its own to the protocol:
// whatever the stdio server answers is what the suite checks.

export interface StdioBridge {
  url: string;
  stop: () => Promise<void>;
}

interface Child {
  proc: ReturnType<typeof spawnChild>;
  /** Answers awaited, by the id the bridge gave the request (callers' ids may repeat on the shared child). */
  waiting: Map<number, (message: { id?: unknown }) => void>;
}

const ANSWER_TIMEOUT_MS = 20_000;

function spawnChild(command: string[], env: Record<string, string>) {
  return Bun.spawn([...command, "mcp"], { env, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
}

async function readAnswers(child: Child): Promise<void> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of child.proc.stdout) {
    buf += decoder.decode(chunk, { stream: true });
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let message: { id?: unknown; method?: unknown } | null = null;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      // Notifications and requests from the server have no caller here waiting: they are dropped.
      const resolve = typeof message?.id === "number" && message.method === undefined ? child.waiting.get(message.id) : undefined;
      if (resolve) {
        child.waiting.delete(message!.id as number);
        resolve(message!);
      }
    }
  }
}

/** Whether a message names its protocol revision itself, as every 2026-07-28 request does. */
const namesRevision = (message: { params?: unknown }): boolean =>
  typeof (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.["io.modelcontextprotocol/protocolVersion"] === "string";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => Response.json(body, { status, headers });

export function startStdioBridge(command: string[], env: Record<string, string>): StdioBridge {
  const sessions = new Map<string, Child>();
  let modern: Child | null = null;
  let nextId = 0;
  const start = (): Child => {
    const child: Child = { proc: spawnChild(command, env), waiting: new Map() };
    void readAnswers(child);
    return child;
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const sessionId = request.headers.get("mcp-session-id");
      if (request.method === "DELETE" && sessionId && sessions.has(sessionId)) {
        sessions.get(sessionId)!.proc.kill();
        sessions.delete(sessionId);
        return new Response(null, { status: 200 });
      }
      // No server-initiated stream to offer: stdio notifications are not carried over.
      if (request.method !== "POST") return json(405, { error: "POST only" }, { allow: "POST" });
      let message: { id?: unknown; method?: unknown; params?: unknown };
      try {
        message = (await request.json()) as typeof message;
      } catch {
        return json(400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      }
      let id = sessionId;
      let child: Child | undefined;
      let oneOff: Child | null = null;
      if (message.method === "initialize") {
        id = crypto.randomUUID();
        sessions.set(id, (child = start()));
      } else if (id) {
        child = sessions.get(id);
        if (!child) return json(404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
      } else if (namesRevision(message)) {
        child = modern ??= start();
      } else {
        child = start();
        oneOff = child;
      }
      const isRequest = typeof message.method === "string" && "id" in message;
      if (!isRequest) {
        child.proc.stdin.write(`${JSON.stringify(message)}\n`);
        child.proc.stdin.flush();
        if (oneOff) child.proc.stdin.end();
        return new Response(null, { status: 202 });
      }
      const ours = ++nextId;
      const target = child;
      const answer = new Promise<{ id?: unknown }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer from notestream mcp within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
        target.waiting.set(ours, (m) => {
          clearTimeout(timer);
          resolve(m);
        });
      });
      child.proc.stdin.write(`${JSON.stringify({ ...message, id: ours })}\n`);
      child.proc.stdin.flush();
      try {
        return json(200, { ...(await answer), id: message.id }, id ? { "mcp-session-id": id } : {});
      } catch (e) {
        return json(504, { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: (e as Error).message } });
      } finally {
        oneOff?.proc.kill();
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    stop: async () => {
      server.stop(true);
      const children = [...sessions.values(), ...(modern ? [modern] : [])].map((c) => c.proc);
      for (const p of children) p.kill();
      await Promise.all(children.map((p) => p.exited));
    },
  };
}
