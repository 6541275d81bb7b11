import { createHash } from "node:crypto";
import {
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  OAuthError,
  TemporarilyUnavailableError,
  TooManyRequestsError,
  UnsupportedGrantTypeError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { and, eq, isNull } from "drizzle-orm";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { oauthClients, oauthCodes, oauthTokens } from "../../db/schema";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { clientIp, requireForm, requireSession } from "../../modules/web/guard";
import { html, page } from "../../modules/web/html";
import { layout, redirect } from "../../modules/web/layout";
import { publicBase } from "../http";
import { acceptableRedirect, MAX_CLIENTS, REGISTRATIONS_PER_HOUR, registrationRetryAfter, storeClient } from "./clients";
import { consentPage, consentPolicy, type AuthorizeParams } from "./consent";
import { findToken, issueTokens, OAUTH_SCOPES, revokeFamily } from "./tokens";

const CODE_TTL_MS = 10 * 60_000;
function oauthError(e: OAuthError, status = e instanceof InvalidClientError ? 401 : 400, retryAfter: number | null = null): Response {
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (retryAfter !== null) headers["retry-after"] = String(retryAfter);
  return Response.json(e.toResponseObject(), { status, headers });
}

function normaliseScope(requested: string | undefined): string | null {
  const parts = (requested?.trim() || OAUTH_SCOPES.join(" ")).split(/\s+/);
  if (parts.some((p) => !(OAUTH_SCOPES as readonly string[]).includes(p))) return null;
  return [...new Set(parts)].join(" ");
}

function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

/**
 * OAuth 2.1 for the hosted MCP endpoint, as the MCP authorization specification asks: protected
 * resource metadata (RFC 9728), authorization server metadata (RFC 8414), dynamic client
 * registration (RFC 7591), authorization code with PKCE S256 only, rotating refresh tokens and
 * revocation (RFC 7009). Sign-in and consent happen in the browser, with the web app's session.
 */
export const oauthRoutes = (deps: Deps) => {
  function checkAuthorize(p: AuthorizeParams, resources: string[]): { error?: Response; client?: typeof oauthClients.$inferSelect; scope?: string; redirectError?: (err: string, desc: string) => Response } {
    const client = p.client_id ? deps.db.select().from(oauthClients).where(eq(oauthClients.clientId, p.client_id)).get() : undefined;
    // Until the client and its redirect URI are known good, errors are shown, never redirected.
    if (!client) return { error: page(layout({ title: "Unknown application", body: html`<div class="narrow card"><h1>Unknown application</h1><p>This authorisation request names no registered client.</p></div>` }), 400) };
    const uris = JSON.parse(client.redirectUris) as string[];
    if (!p.redirect_uri || !uris.includes(p.redirect_uri)) {
      return { error: page(layout({ title: "Bad redirect", body: html`<div class="narrow card"><h1>Bad redirect</h1><p>The redirect URI is not one this application registered.</p></div>` }), 400) };
    }
    const redirectError = (err: string, desc: string) => {
      const u = new URL(p.redirect_uri!);
      u.searchParams.set("error", err);
      u.searchParams.set("error_description", desc);
      if (p.state) u.searchParams.set("state", p.state);
      return redirect(u.toString());
    };
    if (p.response_type !== "code") return { error: redirectError("unsupported_response_type", "only response_type=code is supported") };
    if (!p.code_challenge || p.code_challenge_method !== "S256") return { error: redirectError("invalid_request", "PKCE with code_challenge_method=S256 is required") };
    const scope = normaliseScope(p.scope);
    if (!scope) return { error: redirectError("invalid_scope", `scopes are ${OAUTH_SCOPES.join(" and ")}`) };
    // RFC 8707: tokens from here are for this server's MCP endpoint only.
    if (p.resource && !resources.includes(p.resource.replace(/\/+$/, ""))) return { error: redirectError("invalid_target", "this server issues tokens for its own /mcp only") };
    return { client, scope, redirectError };
  }

  return new Elysia()
    .get("/.well-known/oauth-protected-resource", ({ request }) => protectedResource(deps, request))
    .get("/.well-known/oauth-protected-resource/mcp", ({ request }) => protectedResource(deps, request))
    .get("/.well-known/oauth-authorization-server", ({ request }) => {
      const base = publicBase(deps, request);
      return Response.json({
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
        revocation_endpoint_auth_methods_supported: ["none"],
        scopes_supported: [...OAUTH_SCOPES],
        service_documentation: `${base}/api/v1/openapi.json`,
      });
    })
    .post(
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
    )
    .get("/oauth/authorize", ({ request, query }) => {
      const p = query as AuthorizeParams;
      const checked = checkAuthorize(p, resourcesOf(deps, request));
      if (checked.error) return checked.error;
      const s = requireSession(deps, request);
      if (s instanceof Response) return s;
      return page(consentPage(s, checked.client!.clientName, checked.scope!, p), 200, { "content-security-policy": consentPolicy(p.redirect_uri!) });
    })
    .post("/oauth/authorize", async ({ request, body }) => {
      const p = body as AuthorizeParams & { decision?: string };
      const s = requireForm(deps, request, p);
      if (s instanceof Response) return s;
      const checked = checkAuthorize(p, resourcesOf(deps, request));
      if (checked.error) return checked.error;
      if (p.decision !== "allow") return checked.redirectError!("access_denied", "the user denied access");
      const code = randomBase62(40);
      await deps.writer.write(() =>
        deps.db
          .insert(oauthCodes)
          .values({
            codeHash: sha256Hex(code),
            clientId: checked.client!.clientId,
            accountId: s.account.id,
            workspaceId: s.workspaceId,
            redirectUri: p.redirect_uri!,
            codeChallenge: p.code_challenge!,
            scope: checked.scope!,
            expiresAt: deps.clock.now() + CODE_TTL_MS,
          })
          .run(),
      );
      const u = new URL(p.redirect_uri!);
      u.searchParams.set("code", code);
      if (p.state) u.searchParams.set("state", p.state);
      u.searchParams.set("iss", publicBase(deps, request));
      return redirect(u.toString());
    })
    .post("/oauth/token", async ({ body }) => {
      const b = (body ?? {}) as Record<string, string | undefined>;
      try {
        // A replayed code or refresh token ends its grant; that must commit even though the answer is an
        // error, so the write returns the verdict and the error is raised after it.
        const outcome = await deps.writer.write((): { tokens: ReturnType<typeof issueTokens> } | { replayed: OAuthError } => {
          if (b.grant_type === "authorization_code") {
            if (!b.code || !b.code_verifier || !b.client_id || !b.redirect_uri) throw new InvalidRequestError("code, code_verifier, client_id and redirect_uri are required");
            const row = deps.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, sha256Hex(b.code))).get();
            if (!row) throw new InvalidGrantError("the code is unknown");
            // The tokens of a code share a family named after it, so a replayed code can end them.
            const family = `code_${row.codeHash.slice(0, 24)}`;
            if (row.usedAt !== null) {
              revokeFamily(deps, family);
              return { replayed: new InvalidGrantError("the code was already used; the tokens issued for it are revoked") };
            }
            if (row.expiresAt <= deps.clock.now()) throw new InvalidGrantError("the code expired");
            if (row.clientId !== b.client_id) throw new InvalidGrantError("the code was issued to another client");
            if (row.redirectUri !== b.redirect_uri) throw new InvalidGrantError("redirect_uri does not match the authorization request");
            if (!pkceMatches(b.code_verifier, row.codeChallenge)) throw new InvalidGrantError("the code_verifier does not match the code_challenge");
            deps.db.update(oauthCodes).set({ usedAt: deps.clock.now() }).where(eq(oauthCodes.codeHash, row.codeHash)).run();
            return { tokens: issueTokens(deps, { ...row, family }) };
          }
          if (b.grant_type === "refresh_token") {
            if (!b.refresh_token || !b.client_id) throw new InvalidRequestError("refresh_token and client_id are required");
            const row = findToken(deps, b.refresh_token, "refresh");
            if (!row || row.clientId !== b.client_id) throw new InvalidGrantError("unknown refresh token");
            if (row.revokedAt !== null) {
              // A rotated refresh token used again: someone may have stolen it; end the whole grant.
              revokeFamily(deps, row.family);
              return { replayed: new InvalidGrantError("this refresh token was already used; sign in again") };
            }
            if (row.expiresAt <= deps.clock.now()) throw new InvalidGrantError("the refresh token expired; sign in again");
            const scope = b.scope ? normaliseScope(b.scope) : row.scope;
            if (!scope || !scope.split(" ").every((x) => row.scope.split(" ").includes(x))) throw new InvalidGrantError("a refresh cannot widen the scope");
            // Rotation: the old refresh token and its access tokens end; a new pair continues the grant.
            deps.db.update(oauthTokens).set({ revokedAt: deps.clock.now() }).where(and(eq(oauthTokens.family, row.family), isNull(oauthTokens.revokedAt))).run();
            return { tokens: issueTokens(deps, { ...row, scope }) };
          }
          throw new UnsupportedGrantTypeError("grant_type must be authorization_code or refresh_token");
        });
        if ("replayed" in outcome) throw outcome.replayed;
        return Response.json(outcome.tokens, { headers: { "cache-control": "no-store", pragma: "no-cache" } });
      } catch (e) {
        if (e instanceof OAuthError) return oauthError(e);
        throw e;
      }
    })
    .post("/oauth/revoke", async ({ body }) => {
      const token = ((body ?? {}) as Record<string, string | undefined>).token;
      if (!token) return oauthError(new InvalidRequestError("token is required"));
      await deps.writer.write(() => {
        const row = findToken(deps, token, "refresh") ?? findToken(deps, token, "access");
        // Revoking either ends the whole grant: its refresh and access tokens.
        if (row) revokeFamily(deps, row.family);
      });
      return new Response(null, { status: 200 });
    });
};

function resourcesOf(deps: Deps, request: Request): string[] {
  const base = publicBase(deps, request);
  return [base, `${base}/mcp`];
}

function protectedResource(deps: Deps, request: Request): Response {
  const base = publicBase(deps, request);
  return Response.json({
    resource: `${base}/mcp`,
    authorization_servers: [base],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "notestream",
    resource_documentation: `${base}/api/v1/openapi.json`,
  });
}
