import { InvalidClientMetadataError, TemporarilyUnavailableError, TooManyRequestsError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { randomBase62 } from "../../lib/random";
import { clientIp } from "../../web/guard";
import { acceptableRedirect, MAX_CLIENTS, REGISTRATIONS_PER_HOUR, registrationRetryAfter, storeClient } from "./clients";
import { oauthError } from "./error-response";

/** Dynamic client registration (RFC 7591): public clients only, with PKCE; see clients.ts for what bounds it. */
export const registerRoutes = (deps: Deps) =>
  new Elysia().post(
    "/oauth/register",
    async ({ request }) => {
      // Counted before the body is read: every attempt costs, so a script cannot probe for free.
      const wait = registrationRetryAfter(deps, clientIp(request));
      if (wait !== null) return oauthError(new TooManyRequestsError(`at most ${REGISTRATIONS_PER_HOUR} client registrations an hour from one address; retry later`), 429, wait);
      let body: unknown;
      try {
        body = await request.json();
      } catch {
        return oauthError(new InvalidClientMetadataError("the registration body must be JSON"));
      }
      const { OAuthClientMetadataSchema } = await import("@modelcontextprotocol/sdk/shared/auth.js");
      const parsed = OAuthClientMetadataSchema.safeParse(body);
      if (!parsed.success) return oauthError(new InvalidClientMetadataError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")));
      const meta = parsed.data;
      if (meta.redirect_uris.length === 0 || !meta.redirect_uris.every(acceptableRedirect)) {
        return oauthError(new InvalidClientMetadataError("redirect_uris must be https URLs, or http URLs on a loopback address"));
      }
      if (meta.token_endpoint_auth_method && meta.token_endpoint_auth_method !== "none") {
        return oauthError(new InvalidClientMetadataError("only public clients (token_endpoint_auth_method none, with PKCE) are supported"));
      }
      const clientId = `mcp_${randomBase62(24)}`;
      const now = deps.clock.now();
      const name = (meta.client_name ?? "An MCP client").replace(/[\p{Cc}\p{Cf}]/gu, "").slice(0, 100);
      const full = {
        ...meta,
        client_name: name,
        client_id: clientId,
        client_id_issued_at: Math.floor(now / 1000),
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      };
      const stored = await deps.writer.write(() =>
        storeClient(deps, { clientId, clientName: name, redirectUris: JSON.stringify(meta.redirect_uris), metadata: JSON.stringify(full) }),
      );
      if (!stored.stored) {
        return oauthError(new TemporarilyUnavailableError(`this server holds its maximum of ${MAX_CLIENTS} registered clients; retry later`), 503, stored.retryAfter);
      }
      return Response.json(full, { status: 201, headers: { "cache-control": "no-store" } });
    },
    { parse: "none" },
  );
