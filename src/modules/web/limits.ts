import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { normaliseEmail } from "../accounts/service";

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
  // Not in section 8: wrong current passwords on the password change and the deletion request,
  // as many guesses as sign-in allows an address, for whoever holds a signed-in browser.
  currentPasswordPerAccount: [5, 20 * MINUTE],
  // Each request mails the account's address, so every one counts, as the reset's do.
  deletionPerAccount: [5, HOUR],
  savesPerAccount: [30, MINUTE],
  downloadsPerAccount: [10, MINUTE],
  // "Billing portal or plan change": each one calls the billing provider's API.
  planActionsPerAccount: [5, MINUTE],
  // Buttons that make the server send something (a test delivery, a test mail): a person testing
  // a setup needs a few, a script pressing them needs none.
  testDeliveriesPerAccount: [10, 10 * MINUTE],
  testAlertsPerAccount: [5, HOUR],
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
 * Counts one attempt; past the limit, a 429 with a message a person can act on (`tooMany` says
 * which limit, when "Too many attempts." would not). `refund` gives the attempt back, for limits
 * that count only failures.
 */
export async function limit(deps: Deps, name: BrowserLimit, who: string, tooMany?: string): Promise<{ refund: () => void }> {
  const [n, windowMs] = BROWSER_LIMITS[name];
  const key = `web:${name}:${PER_EMAIL.has(name) ? normaliseEmail(who) : who.toLowerCase()}`;
  const d = await deps.limiter.consume(key, n, "anonymous", windowMs);
  if (!d.allowed) {
    const retry = Math.max(1, Math.ceil(d.reset - deps.clock.now() / 1000));
    const message = tooMany ? `${tooMany} Try again in ${waitText(retry)}.` : `Too many attempts. Please wait ${waitText(retry)} and try again.`;
    throw new AppError("rate_limited", message, undefined, { "retry-after": String(retry) });
  }
  return { refund: () => deps.limiter.refund(key, windowMs) };
}
