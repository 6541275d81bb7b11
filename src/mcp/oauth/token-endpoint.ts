import { createHash } from "node:crypto";
import { InvalidGrantError, InvalidRequestError, OAuthError, UnsupportedGrantTypeError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { sha256Hex } from "../../lib/secrets";
import { oauthError } from "./error-response";
import { findCode, markCodeUsed } from "./store";
import { findToken, issueTokens, normaliseScope, revokeFamily } from "./tokens";

function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

type Fields = Record<string, string | undefined>;
type Outcome = { tokens: ReturnType<typeof issueTokens> } | { replayed: OAuthError };

function exchangeCode(deps: Deps, b: Fields): Outcome {
  if (!b.code || !b.code_verifier || !b.client_id || !b.redirect_uri) throw new InvalidRequestError("code, code_verifier, client_id and redirect_uri are required");
  const row = findCode(deps, sha256Hex(b.code));
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
  markCodeUsed(deps, row.codeHash);
  return { tokens: issueTokens(deps, { ...row, family }) };
}

function refresh(deps: Deps, b: Fields): Outcome {
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
  revokeFamily(deps, row.family);
  return { tokens: issueTokens(deps, { ...row, scope }) };
}

/** The token endpoint (code exchange and rotating refresh) and revocation (RFC 7009). */
export const tokenRoutes = (deps: Deps) =>
  new Elysia()
    .post("/oauth/token", async ({ body }) => {
      const b = (body ?? {}) as Fields;
      try {
        // A replayed code or refresh token ends its grant; that must commit even though the answer is an
        // error, so the write returns the verdict and the error is raised after it.
        const outcome = await deps.writer.write((): Outcome => {
          if (b.grant_type === "authorization_code") return exchangeCode(deps, b);
          if (b.grant_type === "refresh_token") return refresh(deps, b);
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
      const token = ((body ?? {}) as Fields).token;
      if (!token) return oauthError(new InvalidRequestError("token is required"));
      await deps.writer.write(() => {
        const row = findToken(deps, token, "refresh") ?? findToken(deps, token, "access");
        // Revoking either ends the whole grant: its refresh and access tokens.
        if (row) revokeFamily(deps, row.family);
      });
      return new Response(null, { status: 200 });
    });
