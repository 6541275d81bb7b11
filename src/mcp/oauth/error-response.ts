/**
 * An OAuth error (RFC 6749 5.2, RFC 7591 3.2.2): its code and a sentence for people. Our own and
 * not the SDK's: the authorization server answers at start-up paths that should not load the MCP
 * SDK, and the body is two fields.
 */
export class OAuthError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The error codes this server answers with. */
export const OAuthErrorCode = {
  InvalidRequest: "invalid_request",
  InvalidClient: "invalid_client",
  InvalidGrant: "invalid_grant",
  UnsupportedGrantType: "unsupported_grant_type",
  InvalidTarget: "invalid_target",
  InvalidClientMetadata: "invalid_client_metadata",
  TemporarilyUnavailable: "temporarily_unavailable",
  TooManyRequests: "too_many_requests",
} as const;

/** An OAuth error as RFC 6749 answers it: JSON, never cached; 401 for a bad client. */
export function oauthError(e: OAuthError, status = e.code === OAuthErrorCode.InvalidClient ? 401 : 400, retryAfter: number | null = null): Response {
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (retryAfter !== null) headers["retry-after"] = String(retryAfter);
  return Response.json({ error: e.code, error_description: e.message }, { status, headers });
}
