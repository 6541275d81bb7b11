import { requestState } from "../../http/request-state";
import { AppError, ValidationFailed } from "../../http/errors";
import { LifecycleError } from "../accounts/lifecycle";
import { normaliseEmail } from "../accounts/service";
import { TokenError } from "../tokens/service";
import type { Deps } from "../../deps";
import { csrfMatches, loadSession, type WebSession } from "./session";
import { back, redirect } from "./layout";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Section 8's limits on the browser surface: [requests, window]. */
export const BROWSER_LIMITS = {
  signInPerIp: [10, MINUTE],
  signInPerEmail: [5, 20 * MINUTE],
  signUpPerIp: [5, HOUR],
  resetPerIp: [5, HOUR],
  resetPerEmail: [5, HOUR],
  resendPerIp: [5, HOUR],
  resendPerEmail: [5, HOUR],
  signUpPerEmail: [5, HOUR],
  emailChangePerAccount: [3, DAY],
  emailChangePerTarget: [3, DAY],
  profilePerAccount: [10, HOUR],
  savesPerAccount: [30, MINUTE],
  downloadsPerAccount: [10, MINUTE],
} as const satisfies Record<string, readonly [number, number]>;

export type BrowserLimit = keyof typeof BROWSER_LIMITS;

/**
 * Limits keyed by an address someone typed: keyed as the account lookup reads it, so " ALICE@x"
 * and "alice@x" share one budget (and one mailbox cannot be bombed by respelling it).
 */
const PER_EMAIL: ReadonlySet<BrowserLimit> = new Set(["signInPerEmail", "signUpPerEmail", "resetPerEmail", "resendPerEmail", "emailChangePerTarget"]);

function waitText(seconds: number): string {
  if (seconds < 90) return `${seconds} seconds`;
  if (seconds < 5400) return `${Math.ceil(seconds / 60)} minutes`;
  return `${Math.ceil(seconds / 3600)} hours`;
}

/**
 * Counts one attempt; past the limit, a 429 with a message a person can act on. `refund` gives
 * the attempt back, for limits that count only failures.
 */
export function limit(deps: Deps, name: BrowserLimit, who: string): { refund: () => void } {
  const [n, windowMs] = BROWSER_LIMITS[name];
  const key = `web:${name}:${PER_EMAIL.has(name) ? normaliseEmail(who) : who.toLowerCase()}`;
  const d = deps.limiter.consume(key, n, "anonymous", windowMs);
  if (!d.allowed) {
    const retry = Math.max(1, Math.ceil(d.reset - deps.clock.now() / 1000));
    throw new AppError("rate_limited", `Too many attempts. Please wait ${waitText(retry)} and try again.`, undefined, { "retry-after": String(retry) });
  }
  return { refund: () => deps.limiter.refund(key) };
}

export function clientIp(request: Request): string {
  return requestState(request)?.ip ?? "unknown";
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

export class Forbidden extends Error {}

/** A signed-in page: the session, or a redirect to sign in that comes back here. */
export function requireSession(deps: Deps, request: Request): WebSession | Response {
  const s = loadSession(deps, request);
  if (s) return s;
  const url = new URL(request.url);
  return redirect(`/signin?next=${encodeURIComponent(url.pathname + url.search)}`);
}

/** A signed-in form post: the session and its CSRF token (form field or X-CSRF-Token header), and our origin. */
export function requireForm(deps: Deps, request: Request, body: unknown): WebSession | Response {
  const s = loadSession(deps, request);
  const token = (body as Record<string, unknown> | null)?._csrf ?? request.headers.get("x-csrf-token");
  if (!s || !csrfMatches(s.csrf, token) || !sameOrigin(deps, request)) {
    return new Response("This form has expired or did not come from notestream. Reload the page and try again.", {
      status: 403,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  }
  return s;
}

/** What a person reads when an action is refused; anything that is not a refusal is a bug and propagates. */
export function errorMessage(e: unknown): string {
  if (e instanceof ValidationFailed) return (e.details as { message: string }[]).map((d) => d.message).join(" ");
  if (e instanceof AppError || e instanceof TokenError || e instanceof LifecycleError) return e.message;
  throw e;
}

/**
 * A signed-in form post, run and answered with a redirect: refused forms get 403, and a refused
 * action goes back to `onError` with its message shown on the page.
 */
export async function formAction<B = Record<string, string | string[] | undefined>>(
  deps: Deps,
  request: Request,
  body: unknown,
  run: (s: WebSession, b: B) => Promise<Response>,
  onError: string,
): Promise<Response> {
  const s = requireForm(deps, request, body);
  if (s instanceof Response) return s;
  try {
    return await run(s, (body ?? {}) as B);
  } catch (e) {
    return back(onError, "error", errorMessage(e));
  }
}
