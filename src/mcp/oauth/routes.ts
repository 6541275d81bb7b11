import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authorizeRoutes } from "./authorize";
import { metadataRoutes } from "./metadata";
import { registerRoutes } from "./register";
import { tokenRoutes } from "./token-endpoint";

/**
 * OAuth 2.1 for the hosted MCP endpoint, as the MCP authorization specification asks: protected
 * resource metadata (RFC 9728), authorization server metadata (RFC 8414), dynamic client
 * registration (RFC 7591), authorization code with PKCE S256 only, rotating refresh tokens and
 * revocation (RFC 7009). Sign-in and consent happen in the browser, with the web app's session.
 */
export const oauthRoutes = (deps: Deps) =>
  new Elysia().use(metadataRoutes(deps)).use(registerRoutes(deps)).use(authorizeRoutes(deps)).use(tokenRoutes(deps));
