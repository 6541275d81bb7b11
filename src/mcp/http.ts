import type { JSONRPCRequest } from "@modelcontextprotocol/server";
import { Elysia } from "elysia";
import { publicOrigin } from "../http/origin";
import type { Ctx, Deps } from "../deps";
import type { Principal } from "../principal";
import { AppError } from "../http/errors";
import { authenticate } from "../modules/tokens/service";
import { OAUTH_SCOPES } from "../modules/oauth/scopes";
import { oauthPrincipal, OAUTH_ACCESS_PREFIX } from "../modules/oauth/tokens";


/**
 * The 401 challenge. It names the resource metadata (where the OAuth dance starts) and the scope
 * a client should ask for. A request without a Bearer token gets no error code (RFC 6750 3.1:
 * the client may not have known it needed one); a bad token gets invalid_token.
 */
function unauthorized(deps: Deps, request: Request, message: string, withToken: boolean): Response {
  const metadata = `${publicOrigin(deps, request)}/.well-known/oauth-protected-resource/mcp`;
  const params = [`resource_metadata="${metadata}"`, `scope="${OAUTH_SCOPES.join(" ")}"`];
  if (withToken) params.unshift(`error="invalid_token"`, `error_description="${message}"`);
  const body = withToken ? { error: "invalid_token", error_description: message } : { error_description: message };
  return Response.json(body, { status: 401, headers: { "www-authenticate": `Bearer ${params.join(", ")}` } });
}

const bearerOf = (authorization: string | null) => /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];

/** The principal behind a Bearer header: an API token (nst_…) or an OAuth access token (nso_…). */
async function principalOf(deps: Deps, authorization: string | null): Promise<Principal> {
  const secret = bearerOf(authorization);
  if (!secret) throw new AppError("unauthorized", "send Authorization: Bearer <token> (an API token or an OAuth access token)");
  return secret.startsWith(OAUTH_ACCESS_PREFIX) ? await oauthPrincipal(deps, secret) : await authenticate(deps, authorization);
}

/** Whether a JSON-RPC body (one message or a batch) starts a session. */
const initializes = (body: unknown): boolean => (Array.isArray(body) ? body : [body]).some((m) => (m as { method?: unknown } | null)?.method === "initialize");

/**
 * /mcp: MCP over Streamable HTTP, both revisions on one endpoint. A 2026-07-28 request carries its
 * revision and the client's capabilities itself: any instance answers it with a fresh server (the
 * SDK's createMcpHandler), and `subscriptions/listen` is one long answer of its own (listen.ts).
 * A 2025-11-25 request is answered the same way, by the SDK's transport of that revision; its
 * `initialize` also starts a session on this instance (Mcp-Session-Id) for what that revision
 * keeps in one: the event stream (GET) that carries `notifications/resources/updated` of the
 * streams subscribed to, and its end (DELETE).
 */
export const mcpRoutes = (deps: Deps) =>
  new Elysia().all(
    "/mcp",
    async ({ request }) => {
      const sessionId = request.headers.get("mcp-session-id");
      // Outside a session there is no stream for a GET to open nor anything for a DELETE to end.
      // The specification allows 405 for both, and the SDK's client then stops asking; a GET
      // answered with an empty event stream had it reconnect every second.
      if (request.method !== "POST" && !(sessionId && (request.method === "GET" || request.method === "DELETE"))) return notAllowed();
      // Browser-based clients call from their own origin with a Bearer token (CORS: http/cors.ts); no
      // cookie is ever read here, so another origin gains nothing a token does not already give.
      // Operators who want only some origins list them (NOTESTREAM_MCP_ALLOWED_ORIGINS). This
      // server's own origin is the configured one only: taken from the request it would be the Host
      // header, which a DNS-rebinding page sends with its own name, matching its Origin.
      const origin = request.headers.get("origin");
      const allowed = deps.config.mcpAllowedOrigins;
      const own = deps.config.baseUrl ? new URL(deps.config.baseUrl).origin : null;
      if (origin && allowed && !allowed.has(origin) && origin !== own) {
        return Response.json({ error: "forbidden", error_description: "requests from this origin are refused (NOTESTREAM_MCP_ALLOWED_ORIGINS)" }, { status: 403 });
      }
      const authorization = request.headers.get("authorization");
      let ctx: Ctx;
      try {
        ctx = { deps, principal: await principalOf(deps, authorization) };
      } catch (e) {
        if (e instanceof AppError && e.code === "unauthorized") return unauthorized(deps, request, e.message, bearerOf(authorization) !== undefined);
        if (e instanceof AppError) return Response.json({ error: e.code, error_description: e.message }, { status: e.status });
        throw e;
      }
      const stillAllowed = () => principalOf(deps, authorization);
      // The SDK and the tools load on the first MCP request, not at start-up: most servers never get one.
      const [sdk, { LocalBackend }, { buildMcpServer }, { hostedSessions }, { serveListen }] = await Promise.all([
        import("@modelcontextprotocol/server"),
        import("./local"),
        import("./server"),
        import("./sessions"),
        import("./hosted-listen"),
      ]);
      const sessions = hostedSessions(deps);
      if (request.method !== "POST") {
        // A session another instance holds, or one forgotten: as outside a session.
        const held = sessions.find(sessionId, ctx.principal);
        if (!held) return notAllowed();
        if (request.method === "DELETE") {
          sessions.end(held.id);
          return new Response(null, { status: 200 });
        }
        return answerAppError(() => sessions.openStream(held, ctx.principal, request.signal, stillAllowed));
      }
      const text = await request.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined; // the transport answers the parse error
      }
      const backend = new LocalBackend(ctx);
      const caps = await backend.capabilities();
      const legacy = body === undefined || (await sdk.isLegacyRequest(request, body));
      deps.metrics.mcpRequests.inc({ revision: revisionOf(request, body, legacy) });
      if (!legacy) {
        const forwarded = new Request(request.url, { method: "POST", headers: request.headers, body: text, signal: request.signal });
        const factory = () => buildMcpServer(backend, caps, null);
        if (isListen(body)) return answerAppError(() => serveListen(ctx, backend, factory, forwarded, body, stillAllowed));
        return sdk.createMcpHandler(factory, { legacy: "reject" }).fetch(forwarded, { parsedBody: body });
      }
      const started = body !== undefined && initializes(body) ? sessions.start(ctx.principal) : null;
      const session = started ?? sessions.find(sessionId, ctx.principal);
      const server = buildMcpServer(backend, caps, session?.subscriptions ?? null);
      const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        const forwarded = new Request(request.url, { method: "POST", headers: request.headers, body: text });
        const res = await transport.handleRequest(forwarded, body === undefined ? undefined : { parsedBody: body });
        if (started) res.headers.set("mcp-session-id", started.id);
        return res;
      } finally {
        void server.close();
      }
    },
    { parse: "none", detail: { hide: true } },
  );

/** The revisions counted by name; an earlier one still answers, as the SDK negotiates it. */
const KNOWN_REVISIONS = new Set(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]);

/**
 * The revision a request speaks: 2026-07-28 names it in every request's _meta; 2025-11-25 and
 * earlier in initialize, then in the MCP-Protocol-Version header (2025-03-26 when absent, as the
 * specification has servers assume).
 */
function revisionOf(request: Request, body: unknown, legacy: boolean): string {
  const first = (Array.isArray(body) ? body[0] : body) as { method?: unknown; params?: Record<string, unknown> } | undefined;
  const named = legacy
    ? first?.method === "initialize"
      ? first.params?.protocolVersion
      : (request.headers.get("mcp-protocol-version") ?? "2025-03-26")
    : (first?.params?._meta as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/protocolVersion"];
  return typeof named === "string" && KNOWN_REVISIONS.has(named) ? named : "other";
}

const isListen = (body: unknown): body is JSONRPCRequest => (body as { method?: unknown } | null)?.method === "subscriptions/listen" && (body as { id?: unknown }).id !== undefined;

/** A refusal of ours (a token's follows all in use) in the REST error envelope. */
async function answerAppError(fn: () => Response | Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof AppError) return Response.json({ error: e.code, error_description: e.message }, { status: e.status, headers: e.headers });
    throw e;
  }
}

function notAllowed(): Response {
  return Response.json(
    { error: "method_not_allowed", error_description: "outside a session this MCP endpoint takes JSON-RPC with POST; initialize starts a session" },
    { status: 405, headers: { allow: "POST" } },
  );
}
