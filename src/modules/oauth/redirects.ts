/**
 * Which redirect URIs a public client may register, and when an authorization request's redirect
 * is one it registered. Native apps are the usual MCP clients, so RFC 8252 decides: loopback
 * redirects on any port (7.3) and private-use URI schemes (7.1) besides https.
 */

export const MAX_REDIRECT_LENGTH = 2000;

/** Loopback names accepted for http redirects; only the IP literals get any port (RFC 8252 7.3 names IP literals). */
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"];
const LOOPBACK_IPS = ["127.0.0.1", "[::1]"];

/**
 * Schemes a browser handles itself (script, inline documents, local files, its own pages) or that
 * no app registers to receive a code: a code sent there runs as a page, leaks, or goes nowhere.
 * Any other scheme is an app's private-use scheme: RFC 8252 7.1 recommends reverse-domain names
 * (`com.example.app:`) but requires none, and Cursor registers `cursor://…`.
 */
const REFUSED_SCHEMES = new Set([
  "javascript:", "vbscript:", "livescript:", "data:", "file:", "filesystem:", "about:", "blob:", "view-source:",
  "jar:", "ftp:", "ws:", "wss:", "mailto:", "tel:", "sms:",
]);

export function isLoopbackRedirect(u: URL): boolean {
  return u.protocol === "http:" && LOOPBACK_HOSTS.includes(u.hostname);
}

function isLoopbackIpRedirect(u: URL): boolean {
  return u.protocol === "http:" && LOOPBACK_IPS.includes(u.hostname);
}

/** https, http on a loopback address, or an app's private-use scheme; never a fragment. */
export function acceptableRedirect(uri: string): boolean {
  if (uri.length > MAX_REDIRECT_LENGTH) return false;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.hash || uri.includes("#")) return false;
  if (u.protocol === "https:") return true;
  if (u.protocol === "http:") return isLoopbackRedirect(u);
  return !REFUSED_SCHEMES.has(u.protocol);
}

/**
 * The requested redirect is a registered one: the same string, or for a loopback IP literal the same
 * URI on another port, since such clients listen on whatever port the system hands them (VS Code
 * and others register `http://127.0.0.1/callback` and authorise with `:54321`). Scheme, host,
 * path and query still match exactly.
 */
export function redirectMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  let asked: URL;
  try {
    asked = new URL(requested);
  } catch {
    return false;
  }
  if (!isLoopbackIpRedirect(asked) || asked.username || asked.password || requested.includes("#")) return false;
  return registered.some((r) => {
    const known = new URL(r);
    return isLoopbackIpRedirect(known) && known.hostname === asked.hostname && known.pathname === asked.pathname && known.search === asked.search;
  });
}

/** Where a redirect delivers codes, in words a person checks: a host, this computer, or an app's scheme. */
export function redirectTarget(uri: string): string {
  const u = new URL(uri);
  if (isLoopbackRedirect(u)) return "an app on this computer";
  if (u.protocol === "https:") return u.host;
  return `the app that opens ${u.protocol} links`;
}
