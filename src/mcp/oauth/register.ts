import { OAuthError, OAuthErrorCode, oauthError } from "./error-response";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { randomBase62 } from "../../lib/random";
import { clientIp } from "../../web/guard";
import { clientMetadataFrom } from "./client-metadata";
import { MAX_CLIENTS, REGISTRATIONS_PER_HOUR, registrationRetryAfter, storeClient } from "../../modules/oauth/clients";

/** Ten redirect URIs at their longest and every other field fit many times over. */
export const MAX_REGISTRATION_BYTES = 64 * 1024;

/**
 * Dynamic client registration (RFC 7591): public clients only, with PKCE. What a client asks for
 * that this server will not do is replaced rather than refused (a secret auth method becomes
 * `none`, unknown scopes are dropped), and the answer shows what was registered. See clients.ts
 * for what bounds it, client-metadata.ts for what is kept.
 */
export const registerRoutes = (deps: Deps) =>
  new Elysia().post(
    "/oauth/register",
    async ({ request }) => {
      // Counted before the body is read: every attempt costs, so a script cannot probe for free.
      const wait = await registrationRetryAfter(deps, clientIp(request));
      if (wait !== null) return oauthError(new OAuthError(OAuthErrorCode.TooManyRequests, `at most ${REGISTRATIONS_PER_HOUR} client registrations an hour from one address; retry later`), 429, wait);
      const tooLarge = () => oauthError(new OAuthError(OAuthErrorCode.InvalidClientMetadata, `the registration is larger than ${MAX_REGISTRATION_BYTES / 1024} KB`));
      if (Number(request.headers.get("content-length") ?? 0) > MAX_REGISTRATION_BYTES) return tooLarge();
      const text = await request.text();
      if (text.length > MAX_REGISTRATION_BYTES) return tooLarge();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return oauthError(new OAuthError(OAuthErrorCode.InvalidClientMetadata, "the registration body must be JSON"));
      }
      const kept = clientMetadataFrom(body);
      if ("problem" in kept) return oauthError(new OAuthError(OAuthErrorCode.InvalidClientMetadata, kept.problem));
      const meta = kept.metadata;
      const clientId = `mcp_${randomBase62(24)}`;
      const full = { ...meta, client_id: clientId, client_id_issued_at: Math.floor(deps.clock.now() / 1000) };
      const stored = await deps.writer.write(() =>
        storeClient(deps, { clientId, clientName: meta.client_name, redirectUris: JSON.stringify(meta.redirect_uris), metadata: JSON.stringify(full) }),
      );
      if (!stored.stored) {
        return oauthError(new OAuthError(OAuthErrorCode.TemporarilyUnavailable, `this server holds its maximum of ${MAX_CLIENTS} registered clients; retry later`), 503, stored.retryAfter);
      }
      return Response.json(full, { status: 201, headers: { "cache-control": "no-store" } });
    },
    { parse: "none" },
  );
