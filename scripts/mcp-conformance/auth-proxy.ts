// The conformance suite connects to a bare URL: it has no option for an Authorization header, and
// some scenarios send raw fetches of their own. This loopback proxy adds the Bearer token to every
// request and passes everything else through unchanged, the Host and Origin headers included (the
// DNS-rebinding scenario sets both), with answers streamed back as they come (event streams).

export interface AuthProxy {
  /** The origin clients reach the service at. */
  origin: string;
  url: string;
  /** Where to forward to, and with which token: known once the service, told this proxy's origin, runs. */
  forwardTo: (target: string, token: string) => void;
  stop: () => void;
}

export function startAuthProxy(): AuthProxy {
  let upstream: URL | null = null;
  let token = "";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0, // a session's event stream stays open as long as the client keeps it
    async fetch(request) {
      if (!upstream) return new Response("not forwarding yet", { status: 503 });
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const answer = await fetch(`${upstream.origin}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body,
        redirect: "manual",
        signal: request.signal,
        decompress: false,
      } as RequestInit);
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    origin,
    url: `${origin}/mcp`,
    forwardTo: (target, bearer) => {
      upstream = new URL(target);
      token = bearer;
    },
    stop: () => server.stop(true),
  };
}
