import { isPlanName, type PlanName } from "../limits/plans";
import { ConfigError } from "./parse";
import { CONFIG_DEFAULTS } from "./variables";

export interface BillingConfig {
  /** Lemon Squeezy variant id → the plan it sells: the only source of a subscription's plan. */
  billingVariants: ReadonlyMap<number, PlanName>;
  /** The store's checkout link of each plan on sale; a started checkout adds its id to it. */
  billingCheckoutUrls: ReadonlyMap<PlanName, string>;
  /** Lemon Squeezy's API: set, billing is on (the account page's plan checkouts and customer portal). */
  lemonSqueezy: LemonSqueezyConfig | null;
}

export interface LemonSqueezyConfig {
  apiKey: string;
  storeId: string;
  /** Base URL of the API, without a trailing slash. */
  apiUrl: string;
  /** The one variant a checkout of each plan sells. */
  checkoutVariants: ReadonlyMap<PlanName, number>;
}

const paidPlan = (name: string, raw: string): PlanName => {
  if (!isPlanName(raw) || raw === "free") throw new ConfigError(`${name}: "${raw}" is not a paid plan (personal, dev, team, paid, dev_pro)`);
  return raw;
};

/**
 * Both spellings of the variants are read: NOTESTREAM_BILLING_VARIANTS (variant_id:plan, several
 * ids per plan) and API.md's NOTESTREAM_LEMONSQUEEZY_VARIANTS (plan:variant_id, the variant a
 * checkout sells). The webhook knows the union; where both name one variant, the latter wins.
 */
export function parseBilling(env: Record<string, string | undefined>): BillingConfig {
  const billingVariants = new Map<number, PlanName>();
  for (const entry of (env.NOTESTREAM_BILLING_VARIANTS ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d{1,15})\s*:\s*(\S+)$/.exec(entry);
    if (!m) throw new ConfigError(`NOTESTREAM_BILLING_VARIANTS: "${entry}" is not variant_id:plan, like 123456:dev`);
    const id = Number(m[1]);
    const plan = paidPlan("NOTESTREAM_BILLING_VARIANTS", m[2]!);
    if (billingVariants.has(id) && billingVariants.get(id) !== plan) throw new ConfigError(`NOTESTREAM_BILLING_VARIANTS: variant ${id} is given two plans`);
    billingVariants.set(id, plan);
  }
  const checkoutVariants = new Map<PlanName, number>();
  for (const entry of (env.NOTESTREAM_LEMONSQUEEZY_VARIANTS ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z_]+)\s*:\s*(\d{1,15})$/.exec(entry);
    if (!m) throw new ConfigError(`NOTESTREAM_LEMONSQUEEZY_VARIANTS: "${entry}" is not plan:variant_id, like dev:123456`);
    const plan = paidPlan("NOTESTREAM_LEMONSQUEEZY_VARIANTS", m[1]!);
    const id = Number(m[2]);
    if (checkoutVariants.has(plan)) throw new ConfigError(`NOTESTREAM_LEMONSQUEEZY_VARIANTS: ${plan} is given two variants (list extra ones in NOTESTREAM_BILLING_VARIANTS)`);
    if ([...checkoutVariants.values()].includes(id)) throw new ConfigError(`NOTESTREAM_LEMONSQUEEZY_VARIANTS: variant ${id} is given two plans`);
    checkoutVariants.set(plan, id);
    billingVariants.set(id, plan);
  }
  // A plan without its own entry there sells the first variant NOTESTREAM_BILLING_VARIANTS lists for it.
  for (const [id, plan] of billingVariants) if (!checkoutVariants.has(plan)) checkoutVariants.set(plan, id);
  const urlsRaw = env.NOTESTREAM_BILLING_CHECKOUT_URLS ?? "";
  const billingCheckoutUrls = new Map<PlanName, string>();
  // Split only before "plan=", so a comma inside a URL's query survives.
  for (const entry of urlsRaw.split(/,(?=\s*[a-z_]+\s*=)/).map((s) => s.trim()).filter(Boolean)) {
    const at = entry.indexOf("=");
    const plan = paidPlan("NOTESTREAM_BILLING_CHECKOUT_URLS", entry.slice(0, at).trim());
    const url = entry.slice(at + 1).trim();
    if (!/^https?:\/\/[^\s/#]+[^\s#]*$/.test(url) || !URL.canParse(url)) {
      throw new ConfigError(`NOTESTREAM_BILLING_CHECKOUT_URLS: the link of ${plan} must be an http(s) URL without a #fragment, got "${url}"`);
    }
    // A checkout whose variant the webhook does not know would take the money and change nothing.
    if (![...billingVariants.values()].includes(plan)) {
      throw new ConfigError(`NOTESTREAM_BILLING_CHECKOUT_URLS: no variant in NOTESTREAM_BILLING_VARIANTS sells ${plan}`);
    }
    billingCheckoutUrls.set(plan, url);
  }
  return { billingVariants, billingCheckoutUrls, lemonSqueezy: parseLemonSqueezy(env, checkoutVariants) };
}

/** Billing is on with an API key; then everything it needs must be there, or money would change nothing. */
function parseLemonSqueezy(env: Record<string, string | undefined>, checkoutVariants: ReadonlyMap<PlanName, number>): LemonSqueezyConfig | null {
  const apiKey = env.NOTESTREAM_LEMONSQUEEZY_API_KEY?.trim() ?? "";
  const storeId = env.NOTESTREAM_LEMONSQUEEZY_STORE_ID?.trim() ?? "";
  if (!apiKey) {
    if (storeId) throw new ConfigError("NOTESTREAM_LEMONSQUEEZY_STORE_ID is set but NOTESTREAM_LEMONSQUEEZY_API_KEY is not: set both to turn billing on");
    return null;
  }
  if (!/^\d{1,15}$/.test(storeId)) throw new ConfigError(`NOTESTREAM_LEMONSQUEEZY_STORE_ID must be the store's number, got "${storeId}"`);
  if (checkoutVariants.size === 0) throw new ConfigError("NOTESTREAM_LEMONSQUEEZY_API_KEY needs NOTESTREAM_LEMONSQUEEZY_VARIANTS (plan:variant_id, like dev:123456): no plan is on sale");
  // Without the webhook's secret every delivery is refused: buyers would pay and nothing would change.
  if (!env.NOTESTREAM_BILLING_SECRET) throw new ConfigError("NOTESTREAM_LEMONSQUEEZY_API_KEY needs NOTESTREAM_BILLING_SECRET, the webhook's signing secret, so that purchases reach the account");
  const apiUrl = (env.NOTESTREAM_LEMONSQUEEZY_API_URL?.trim() || CONFIG_DEFAULTS.NOTESTREAM_LEMONSQUEEZY_API_URL).replace(/\/+$/, "");
  if (!/^https?:\/\/[^\s/#?]+[^\s#?]*$/.test(apiUrl) || !URL.canParse(apiUrl)) {
    throw new ConfigError(`NOTESTREAM_LEMONSQUEEZY_API_URL must be an http(s) URL without a query, got "${apiUrl}"`);
  }
  return { apiKey, storeId, apiUrl, checkoutVariants };
}
