// The conformance suite's server mode speaks Streamable HTTP only. To run its scenarios against
// `notestream mcp` (stdio), this loopback bridge gives each `initialize` a child `notestream mcp`
// of its own (a session), writes each POSTed JSON-RPC message to the child's stdin as one line and
// answers a request with the child's answer of the same id, as JSON. It adds nothing of its own to
// the protocol: whatever the stdio server answers is what the suite checks.

export interface StdioBridge {
  url: string;
  stop: () => Promise<void>;
}

interface Child {
  proc: ReturnType<typeof spawnChild>;
  waiting: Map<string, (message: unknown) => void>;
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
      let message: { id?: unknown } | null = null;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      // Notifications and requests from the server have no caller here waiting: they are dropped.
      const key = JSON.stringify(message?.id ?? null);
      const resolve = child.waiting.get(key);
      if (resolve && message && "id" in message) {
        child.waiting.delete(key);
        resolve(message);
      }
    }
  }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => Response.json(body, { status, headers });

export function startStdioBridge(command: string[], env: Record<string, string>): StdioBridge {
  const sessions = new Map<string, Child>();
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
      let message: { id?: unknown; method?: unknown };
      try {
        message = (await request.json()) as typeof message;
      } catch {
        return json(400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      }
      let id = sessionId;
      if (message.method === "initialize") {
        id = crypto.randomUUID();
        const child: Child = { proc: spawnChild(command, env), waiting: new Map() };
        void readAnswers(child);
        sessions.set(id, child);
      }
      const child = id ? sessions.get(id) : undefined;
      if (!child) return json(404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
      const isRequest = typeof message.method === "string" && "id" in message;
      const answer = isRequest
        ? new Promise<unknown>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no answer from notestream mcp within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
            child.waiting.set(JSON.stringify(message.id), (m) => {
              clearTimeout(timer);
              resolve(m);
            });
          })
        : null;
      child.proc.stdin.write(`${JSON.stringify(message)}\n`);
      child.proc.stdin.flush();
      if (!answer) return new Response(null, { status: 202 });
      try {
        return json(200, await answer, { "mcp-session-id": id! });
      } catch (e) {
        return json(504, { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: (e as Error).message } });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    stop: async () => {
      server.stop(true);
      const children = [...sessions.values()].map((c) => c.proc);
      for (const p of children) p.kill();
      await Promise.all(children.map((p) => p.exited));
    },
  };
}
