import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { publicOrigin } from "../../http/origin";
import { OAUTH_SCOPES } from "../../modules/oauth/scopes";

/** The resources tokens from here are for (RFC 8707): this server's MCP endpoint, named with or without /mcp. */
export function resourcesOf(deps: Deps, request: Request): string[] {
  const base = publicOrigin(deps, request);
  return [base, `${base}/mcp`];
}

/**
 * A metadata document. With a base URL it names the same origin for every request: any cache may
 * keep it an hour (Vary: Origin, as CORS answers an Origin with its own header). Without one it
 * names the origin this request came to (its Host, or what the trusted proxy forwarded), which the
 * next request through the same cache may not share: no cache keeps it.
 */
function metadataAnswer(deps: Deps, body: Record<string, unknown>): Response {
  const headers: Record<string, string> = deps.config.baseUrl ? { "cache-control": "public, max-age=3600", vary: "Origin" } : { "cache-control": "no-store" };
  return Response.json(body, { headers });
}

function protectedResource(deps: Deps, request: Request): Response {
  const base = publicOrigin(deps, request);
  return metadataAnswer(deps, {
    resource: `${base}/mcp`,
    authorization_servers: [base],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "notestream",
    resource_documentation: `${base}/api/v1/openapi.json`,
  });
}

/** Protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414): how a client finds the rest. */
export const metadataRoutes = (deps: Deps) =>
  new Elysia()
    .get("/.well-known/oauth-protected-resource", ({ request }) => protectedResource(deps, request))
    .get("/.well-known/oauth-protected-resource/mcp", ({ request }) => protectedResource(deps, request))
    .get("/.well-known/oauth-authorization-server", ({ request }) => {
      const base = publicOrigin(deps, request);
      return metadataAnswer(deps, {
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        revocation_endpoint: `${base}/oauth/revoke`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        authorization_response_iss_parameter_supported: true,
        token_endpoint_auth_methods_supported: ["none"],
        // A client_id may be the https URL of the client's metadata document (client-document.ts).
        client_id_metadata_document_supported: true,
        revocation_endpoint_auth_methods_supported: ["none"],
        scopes_supported: [...OAUTH_SCOPES],
        service_documentation: `${base}/api/v1/openapi.json`,
      });
    });
