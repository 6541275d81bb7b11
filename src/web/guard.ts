import type { Deps } from "../deps";
import { requestState } from "../http/request-state";
import { cookieValue, csrfMatches, FORM_COOKIE, loadSession, type WebSession } from "./session";

/**
 * No signed-in session where a page needs one. Pages send the browser to sign in and back to
 * `returnTo`; the pages' own scripts (returnTo null) get a bare 401. Answered by page-errors.ts.
 */
export class SignInRequired extends Error {
  constructor(readonly returnTo: string | null) {
    super("sign-in required");
  }
}

/** A form post that did not come from our own page: its CSRF token or its Origin is wrong. Answered 403. */
export class FormRefused extends Error {
  constructor() {
    super("This form has expired or did not come from notestream. Reload the page and try again.");
  }
}

export function clientIp(request: Request): string {
  return requestState(request)?.ip() ?? "unknown";
}


/**
 * Forms are only accepted from our own pages: an Origin header, when sent, must be ours. Our pages
 * send no Referer (Referrer-Policy: no-referrer), so browsers send `Origin: null` with their form
 * posts; that is accepted only when the browser itself vouches the request came from our origin
 * (Sec-Fetch-Site, which no page can set). A sandboxed frame elsewhere also sends null, as cross-site.
 */
export function sameOrigin(deps: Deps, request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === "null") return request.headers.get("sec-fetch-site") === "same-origin";
  if (!origin) return true;
  const ours = deps.config.baseUrl ? new URL(deps.config.baseUrl).origin : new URL(request.url).origin;
  return origin === ours || origin === new URL(request.url).origin;
}

/** A signed-in page: the session, or SignInRequired, which comes back here after sign-in. */
export async function requireSession(deps: Deps, request: Request): Promise<WebSession> {
  const s = await loadSession(deps, request);
  if (s) return s;
  const url = new URL(request.url);
  throw new SignInRequired(url.pathname + url.search);
}

/** A signed-in form post: the session and its CSRF token (form field or X-CSRF-Token header), and our origin. */
export async function requireForm(deps: Deps, request: Request, body: unknown): Promise<WebSession> {
  const s = await loadSession(deps, request);
  const token = (body as Record<string, unknown> | null)?._csrf ?? request.headers.get("x-csrf-token");
  if (!s || !csrfMatches(s.csrf, token) || !sameOrigin(deps, request)) throw new FormRefused();
  return s;
}

/** A form posted before sign-in: the double-submit token of its cookie and field, and our origin. */
export function requirePublicForm(deps: Deps, request: Request, body: unknown): void {
  const cookie = cookieValue(request, FORM_COOKIE);
  if (!cookie || !csrfMatches(cookie, (body as Record<string, unknown> | null)?._csrf) || !sameOrigin(deps, request)) throw new FormRefused();
}
