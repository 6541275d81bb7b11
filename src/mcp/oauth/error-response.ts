import { InvalidClientError, type OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

/** An OAuth error as RFC 6749 answers it: the SDK's JSON body, never cached; 401 for a bad client. */
export function oauthError(e: OAuthError, status = e instanceof InvalidClientError ? 401 : 400, retryAfter: number | null = null): Response {
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (retryAfter !== null) headers["retry-after"] = String(retryAfter);
  return Response.json(e.toResponseObject(), { status, headers });
}
