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

/**
 * POST /mcp: MCP over Streamable HTTP, stateless (a fresh server per request, JSON answers), with
 * the SDK's web-standard transport.
 */
export const mcpRoutes = (deps: Deps) =>
  new Elysia().all(
    "/mcp",
    async ({ request }) => {
      // Stateless: no stream for a GET to open and no session for a DELETE to end. The specification
      // allows 405 for both, and the SDK's client then stops asking; a GET answered with an empty
      // event stream had it reconnect every second for as long as it stayed connected.
      if (request.method !== "POST") {
        return Response.json({ error: "method_not_allowed", error_description: "this MCP endpoint is stateless: send JSON-RPC with POST" }, { status: 405, headers: { allow: "POST" } });
      }
      // Browser-based clients call from their own origin with a Bearer token (CORS: http/cors.ts); no
      // cookie is ever read here, so another origin gains nothing a token does not already give.
      // Operators who want only some origins list them (NOTESTREAM_MCP_ALLOWED_ORIGINS).
      const origin = request.headers.get("origin");
      const allowed = deps.config.mcpAllowedOrigins;
      if (origin && allowed && !allowed.has(origin) && origin !== new URL(publicOrigin(deps, request)).origin) {
        return Response.json({ error: "forbidden", error_description: "requests from this origin are refused (NOTESTREAM_MCP_ALLOWED_ORIGINS)" }, { status: 403 });
      }
      let ctx: Ctx;
      try {
        ctx = { deps, principal: await principalOf(deps, request.headers.get("authorization")) };
      } catch (e) {
        if (e instanceof AppError && e.code === "unauthorized") return unauthorized(deps, request, e.message, bearerOf(request.headers.get("authorization")) !== undefined);
        if (e instanceof AppError) return Response.json({ error: e.code, error_description: e.message }, { status: e.status });
        throw e;
      }
      // The SDK and the tools load on the first MCP request, not at start-up: most servers never get one.
      const [{ WebStandardStreamableHTTPServerTransport }, { LocalBackend }, { buildMcpServer }] = await Promise.all([
        import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
        import("./local"),
        import("./server"),
      ]);
      const backend = new LocalBackend(ctx);
      const server = buildMcpServer(backend, await backend.capabilities());
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        return await transport.handleRequest(request);
      } finally {
        void server.close();
      }
    },
    { parse: "none", detail: { hide: true } },
  );
