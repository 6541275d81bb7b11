import type { LemonSqueezyConfig } from "../../config";
import { AppError } from "../../http/errors";
import { logEvent } from "../../http/log";

/**
 * Lemon Squeezy's API (JSON:API), called from the server only: the key never reaches a browser,
 * and what a checkout binds (store, variant, workspace) is set here, where the buyer cannot edit
 * it. Every failure becomes a refusal a person can act on ("nothing was charged, try again") and a
 * warn line for the operator with the status and the provider's own words, never the key.
 */

/** How long the provider gets to answer, body included: the person is waiting on the page. */
export const PROVIDER_TIMEOUT_MS = 10_000;

export interface ProviderCheckout {
  storeId: string;
  variantId: number;
  email: string;
  /** Copied by the provider into every event of the subscription (meta.custom_data). */
  custom: Record<string, string>;
  /** Where the provider sends the buyer after paying. */
  redirectUrl: string;
  expiresAt: Date;
}

const unavailable = (what: string) =>
  new AppError("conflict", `The payment provider ${what}. Nothing was charged; please try again in a minute, and tell the operator if it keeps happening.`);

/** The provider's first JSON:API error, for the log: its own explanation of a refusal. */
function providerDetail(text: string): string {
  try {
    const errors = (JSON.parse(text) as { errors?: { detail?: unknown; title?: unknown }[] }).errors;
    const first = errors?.[0];
    return String(first?.detail ?? first?.title ?? "").slice(0, 300);
  } catch {
    return "";
  }
}

async function call(ls: LemonSqueezyConfig, method: "GET" | "POST", path: string, body: unknown, timeoutMs: number): Promise<unknown> {
  const started = Date.now();
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${ls.apiUrl}${path}`, {
      method,
      headers: {
        accept: "application/vnd.api+json",
        "content-type": "application/vnd.api+json",
        authorization: `Bearer ${ls.apiKey}`,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      // An API that redirects is not the one configured: the key is not sent on to another host.
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await res.text();
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
    logEvent("warn", "billing provider unreachable", { method, path: path.replace(/\d+/g, ":id"), error: timedOut ? `no answer in ${timeoutMs} ms` : String((e as Error)?.message ?? e).slice(0, 200), ms: Date.now() - started });
    throw unavailable(timedOut ? "did not answer in time" : "could not be reached");
  }
  if (!res.ok) {
    logEvent("warn", "billing provider refused", { method, path: path.replace(/\d+/g, ":id"), status: res.status, detail: providerDetail(text) });
    // A 4xx is this server's request being wrong (key, store, variant): the operator must fix it.
    throw res.status >= 500 || res.status === 429 ? unavailable(`is not answering properly (HTTP ${res.status})`) : unavailable(`refused the request (HTTP ${res.status})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    logEvent("warn", "billing provider answered something unreadable", { method, path: path.replace(/\d+/g, ":id"), status: res.status });
    throw unavailable("answered something unreadable");
  }
}

/** An absolute http(s) URL the browser may be sent to, or null. */
function linkIn(value: unknown): string | null {
  if (typeof value !== "string" || !URL.canParse(value)) return null;
  const url = new URL(value);
  return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
}

function unreadable(what: string): AppError {
  logEvent("warn", "billing provider answered without a link", { what });
  return unavailable("answered without the link it should have");
}

/** POST /checkouts: a checkout of one variant, good only until it expires; returns its URL. */
export async function createProviderCheckout(ls: LemonSqueezyConfig, c: ProviderCheckout, timeoutMs = PROVIDER_TIMEOUT_MS): Promise<string> {
  const answer = await call(
    ls,
    "POST",
    "/checkouts",
    {
      data: {
        type: "checkouts",
        attributes: {
          checkout_data: { email: c.email, custom: c.custom },
          // Only the variant chosen here: the buyer cannot switch to another plan in the checkout.
          product_options: { enabled_variants: [c.variantId], redirect_url: c.redirectUrl },
          expires_at: c.expiresAt.toISOString(),
        },
        relationships: {
          store: { data: { type: "stores", id: c.storeId } },
          variant: { data: { type: "variants", id: String(c.variantId) } },
        },
      },
    },
    timeoutMs,
  );
  const url = linkIn((answer as { data?: { attributes?: { url?: unknown } } })?.data?.attributes?.url);
  if (!url) throw unreadable("checkout url");
  return url;
}

/** GET /subscriptions/{id}: the customer portal link of the subscription (signed by the provider, short-lived). */
export async function customerPortalUrl(ls: LemonSqueezyConfig, subscriptionId: string, timeoutMs = PROVIDER_TIMEOUT_MS): Promise<string> {
  const answer = await call(ls, "GET", `/subscriptions/${encodeURIComponent(subscriptionId)}`, undefined, timeoutMs);
  const url = linkIn((answer as { data?: { attributes?: { urls?: { customer_portal?: unknown } } } })?.data?.attributes?.urls?.customer_portal);
  if (!url) throw unreadable("customer_portal");
  return url;
}
