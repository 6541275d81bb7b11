import { createHash } from "node:crypto";
import { OAuthError, OAuthErrorCode, oauthError } from "./error-response";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { sha256Hex } from "../../lib/secrets";
import { resourcesOf } from "./metadata";
import { findCode, markCodeUsed } from "../../modules/oauth/codes";
import { knownScope } from "../../modules/oauth/scopes";
import { findToken, graceAnswer, issueTokens, revokeFamily, rotateRefresh, type TokenAnswer } from "../../modules/oauth/tokens";

function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

type Fields = Record<string, string | string[] | undefined>;
type Outcome = { tokens: TokenAnswer } | { replayed: OAuthError };

/**
 * RFC 8707 at the token endpoint: every `resource` named must be this server's MCP endpoint, and
 * for a code the one its authorization request named (an exchange cannot move the code's tokens
 * to another resource). Naming none is fine: the tokens are for /mcp either way.
 */
function checkResource(b: Fields, resources: string[], bound: string | null = null): void {
  for (const raw of ([] as string[]).concat(b.resource ?? [])) {
    const resource = raw.replace(/\/+$/, "");
    if (!resources.includes(resource)) throw new OAuthError(OAuthErrorCode.InvalidTarget, "this server issues tokens for its own /mcp only");
    if (bound !== null && resource !== bound) throw new OAuthError(OAuthErrorCode.InvalidTarget, `the code was issued for ${bound}`);
  }
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? undefined : v);

async function exchangeCode(deps: Deps, raw: Fields, resources: string[]): Promise<Outcome> {
  const b = { code: one(raw.code), code_verifier: one(raw.code_verifier), client_id: one(raw.client_id), redirect_uri: one(raw.redirect_uri) };
  if (!b.code || !b.code_verifier || !b.client_id || !b.redirect_uri) throw new OAuthError(OAuthErrorCode.InvalidRequest, "code, code_verifier, client_id and redirect_uri are required");
  const row = await findCode(deps, sha256Hex(b.code));
  if (!row) throw new OAuthError(OAuthErrorCode.InvalidGrant, "the code is unknown");
  // The tokens of a code share a family named after it, so a replayed code can end them.
  const family = `code_${row.codeHash.slice(0, 24)}`;
  if (row.usedAt !== null) {
    await revokeFamily(deps, family);
    return { replayed: new OAuthError(OAuthErrorCode.InvalidGrant, "the code was already used; the tokens issued for it are revoked") };
  }
  if (row.expiresAt <= deps.clock.now()) throw new OAuthError(OAuthErrorCode.InvalidGrant, "the code expired");
  if (row.clientId !== b.client_id) throw new OAuthError(OAuthErrorCode.InvalidGrant, "the code was issued to another client");
  if (row.redirectUri !== b.redirect_uri) throw new OAuthError(OAuthErrorCode.InvalidGrant, "redirect_uri does not match the authorization request");
  if (!pkceMatches(b.code_verifier, row.codeChallenge)) throw new OAuthError(OAuthErrorCode.InvalidGrant, "the code_verifier does not match the code_challenge");
  checkResource(raw, resources, row.resource);
  await markCodeUsed(deps, row.codeHash);
  return { tokens: await issueTokens(deps, { ...row, family }) };
}

async function refresh(deps: Deps, raw: Fields, resources: string[]): Promise<Outcome> {
  const b = { refresh_token: one(raw.refresh_token), client_id: one(raw.client_id), scope: one(raw.scope) };
  if (!b.refresh_token || !b.client_id) throw new OAuthError(OAuthErrorCode.InvalidRequest, "refresh_token and client_id are required");
  const row = await findToken(deps, b.refresh_token, "refresh");
  if (!row || row.clientId !== b.client_id) throw new OAuthError(OAuthErrorCode.InvalidGrant, "unknown refresh token");
  checkResource(raw, resources);
  if (row.revokedAt !== null) {
    const again = await graceAnswer(deps, row, b.refresh_token);
    if (again) return { tokens: again };
    // A rotated refresh token used again: someone may have stolen it; end the whole grant.
    await revokeFamily(deps, row.family);
    return { replayed: new OAuthError(OAuthErrorCode.InvalidGrant, "this refresh token was already used; sign in again") };
  }
  if (row.expiresAt <= deps.clock.now()) throw new OAuthError(OAuthErrorCode.InvalidGrant, "the refresh token expired; sign in again");
  // Unknown scopes are ignored (RFC 6749 3.3); naming none we know keeps the grant's scope.
  const scope = (b.scope && knownScope(b.scope)) || row.scope;
  if (!scope.split(" ").every((x) => row.scope.split(" ").includes(x))) throw new OAuthError(OAuthErrorCode.InvalidGrant, "a refresh cannot widen the scope");
  return { tokens: await rotateRefresh(deps, row, b.refresh_token, scope) };
}

/** The token endpoint (code exchange and rotating refresh) and revocation (RFC 7009). */
export const tokenRoutes = (deps: Deps) =>
  new Elysia()
    .post("/oauth/token", async ({ body, request }) => {
      const b = (body ?? {}) as Fields;
      const resources = resourcesOf(deps, request);
      try {
        // A replayed code or refresh token ends its grant; that must commit even though the answer is an
        // error, so the write returns the verdict and the error is raised after it.
        const outcome = await deps.writer.write(async (): Promise<Outcome> => {
          if (b.grant_type === "authorization_code") return exchangeCode(deps, b, resources);
          if (b.grant_type === "refresh_token") return refresh(deps, b, resources);
          throw new OAuthError(OAuthErrorCode.UnsupportedGrantType, "grant_type must be authorization_code or refresh_token");
        });
        if ("replayed" in outcome) throw outcome.replayed;
        return Response.json(outcome.tokens, { headers: { "cache-control": "no-store", pragma: "no-cache" } });
      } catch (e) {
        if (e instanceof OAuthError) return oauthError(e);
        throw e;
      }
    })
    .post("/oauth/revoke", async ({ body }) => {
      const token = one(((body ?? {}) as Fields).token);
      if (!token) return oauthError(new OAuthError(OAuthErrorCode.InvalidRequest, "token is required"));
      await deps.writer.write(async () => {
        const row = (await findToken(deps, token, "refresh")) ?? (await findToken(deps, token, "access"));
        // Revoking either ends the whole grant: its refresh and access tokens.
        if (row) await revokeFamily(deps, row.family);
      });
      return new Response(null, { status: 200 });
    });
