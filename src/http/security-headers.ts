/**
 * What every page may do: load its own script and stylesheet, submit forms to this service, and
 * nothing else: no inline script or style, no framing (the Delete, Revoke and Allow buttons cannot
 * be overlaid by another site), no <base> rewriting. A route that must widen it (the OAuth consent
 * form, whose answer redirects to the client) sets its own policy, which is kept.
 */
export const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * Security headers for everything outside /api/v1 (pages, OAuth, inbox, health). Reset, confirm
 * and inbox tokens live in URLs, so no Referer ever leaves; HSTS only when the service says it is
 * served over https (NOTESTREAM_BASE_URL), Secure cookies whenever the request's origin is https.
 */
export function secureResponse(response: Response, hsts: boolean, https: boolean): void {
  const h = response.headers;
  // Cookies set over https are Secure, also where only the proxy in front speaks https.
  if (https) {
    const cookies = h.getSetCookie();
    if (cookies.some((c) => !/;\s*secure\b/i.test(c))) {
      h.delete("set-cookie");
      for (const c of cookies) h.append("set-cookie", /;\s*secure\b/i.test(c) ? c : `${c}; Secure`);
    }
  }
  h.set("x-content-type-options", "nosniff");
  h.set("referrer-policy", "no-referrer");
  if (hsts) h.set("strict-transport-security", "max-age=31536000; includeSubDomains");
  if (h.get("content-type")?.startsWith("text/html")) {
    if (!h.has("content-security-policy")) h.set("content-security-policy", PAGE_POLICY);
    h.set("x-frame-options", "DENY");
  }
}
