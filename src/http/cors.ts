/**
 * CORS for the endpoints browser-based clients call with a Bearer token (the MCP endpoint and the
 * OAuth server's metadata, registration, token and revocation). No cookie is involved there, so
 * any origin may call them (unless the operator lists the allowed ones); the pages, which use
 * cookies, get no CORS at all.
 */
export interface CorsPolicy {
  /** Whether a path is one of the Bearer-only endpoints. */
  covers(path: string): boolean;
  /** Origins allowed to call them: null for any. */
  origins: ReadonlySet<string> | null;
}

const ALLOW_HEADERS = "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID";
const EXPOSE_HEADERS = "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version";

export function corsAllows(policy: CorsPolicy, origin: string): boolean {
  return policy.origins === null || policy.origins.has(origin);
}

/** The answer to a browser's preflight, before anything else looks at the request. */
export function preflight(policy: CorsPolicy, request: Request): Response {
  const origin = request.headers.get("origin");
  if (!origin || !corsAllows(policy, origin)) return new Response(null, { status: 403 });
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      // GET for the metadata documents; /mcp takes POST, and GET and DELETE within a session.
      "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
      "access-control-allow-headers": ALLOW_HEADERS,
      "access-control-max-age": "600",
      vary: "Origin",
    },
  });
}

/** The CORS headers of an actual answer to an allowed origin. */
export function addCors(policy: CorsPolicy, request: Request, response: Response): void {
  const origin = request.headers.get("origin");
  if (!origin || !corsAllows(policy, origin)) return;
  response.headers.set("access-control-allow-origin", origin);
  response.headers.set("access-control-expose-headers", EXPOSE_HEADERS);
  if (!/(^|,)\s*origin\s*(,|$)/i.test(response.headers.get("vary") ?? "")) response.headers.append("vary", "Origin");
}
