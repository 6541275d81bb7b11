/** The limit profiles NOTESTREAM_LIMIT_PROFILE names: the specification's two, and one without limits. */
export const LIMIT_PROFILES = ["standard", "alternate", "unlimited"] as const;
export type LimitProfileName = (typeof LIMIT_PROFILES)[number];

/** Plan names an account or team may carry. Each profile maps them onto its own tiers. */
export const PLAN_NAMES = ["free", "personal", "dev", "team", "paid", "dev_pro"] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const MB = 1024 * 1024;
export const GB = 1024 * MB;

/** Note caps: one count shared by rich and plain notes, or two counted apart. */
export type NoteCaps = { shared: number } | { rich: number; plain: number };

export interface RateLimits {
  reads: number;
  writes: number;
  appends: number;
}

/** A tier's limits. `null` means "no cap". */
export interface Tier {
  name: string;
  api: boolean;
  notes: NoteCaps | null;
  storage: number | null;
  tokens: number | null;
  plainBody: number | null;
  richPlain: number | null;
  richHtml: number | null;
  folders: number | null;
  seededFolders: number;
  rate: RateLimits | null;
  bulk: boolean;
  deadman: boolean;
  /** Months a lapsed account stays readable; null is without limit. */
  readOnlyMonths: number | null;
}

const DEV_RATE: RateLimits = { reads: 600, writes: 60, appends: 300 };
/** The Dev plan's per-minute buckets: also what an agent on a plan without API rates gets. */
/**
 * An AI client's budget: its plan's rate, or on plans without API access (whose agents may still
 * read over MCP) Dev's. Null only in the unlimited profile, where nothing is limited.
 */
export function agentRate(profile: LimitProfileName, tier: Tier): RateLimits | null {
  return tier.rate ?? (profile === "unlimited" ? null : DEV_RATE);
}
const TEAM_RATE: RateLimits = { reads: 2000, writes: 200, appends: 1000 };

const standardBase = {
  richPlain: 2 * MB,
  richHtml: 4 * MB,
  folders: 100,
  seededFolders: 3,
  bulk: true,
  readOnlyMonths: 12,
};

const alternateBase = {
  richPlain: 1 * MB,
  richHtml: 2 * MB,
  folders: 100,
  seededFolders: 1,
  readOnlyMonths: null,
};

// Section 8 of the specification, as data.
const standard: Record<string, Tier> = {
  free: { ...standardBase, name: "free", api: false, notes: { shared: 10 }, storage: 50 * MB, tokens: 0, plainBody: 1 * MB, rate: null, deadman: false },
  personal: { ...standardBase, name: "personal", api: false, notes: { shared: 1000 }, storage: 500 * MB, tokens: 0, plainBody: 1 * MB, rate: null, deadman: false },
  dev: { ...standardBase, name: "dev", api: true, notes: { rich: 1000, plain: 10000 }, storage: 15 * GB, tokens: 3, plainBody: 3 * MB, rate: DEV_RATE, deadman: true },
  team: { ...standardBase, name: "team", api: true, notes: { rich: 1000, plain: 50000 }, storage: 50 * GB, tokens: 30, plainBody: 3 * MB, rate: TEAM_RATE, deadman: true },
};

const alternate: Record<string, Tier> = {
  free: { ...alternateBase, name: "free", api: false, notes: { shared: 10 }, storage: null, tokens: 0, plainBody: 1 * MB, rate: null, bulk: false, deadman: false },
  paid: { ...alternateBase, name: "paid", api: false, notes: { shared: 1000 }, storage: null, tokens: 0, plainBody: 1 * MB, rate: null, bulk: false, deadman: false },
  dev: { ...alternateBase, name: "dev", api: true, notes: { rich: 1000, plain: 10000 }, storage: 15 * GB, tokens: 1, plainBody: 1.5 * MB, rate: DEV_RATE, bulk: false, deadman: false },
  dev_pro: { ...alternateBase, name: "dev_pro", api: true, notes: { rich: 1000, plain: 30000 }, storage: 30 * GB, tokens: 10, plainBody: 3 * MB, rate: TEAM_RATE, bulk: true, deadman: true },
};

/** For self-hosters: every plan behaves as the top tier with no caps and no rate limits. */
const UNLIMITED: Tier = {
  name: "unlimited", api: true, notes: null, storage: null, tokens: null, plainBody: null, richPlain: null,
  richHtml: null, folders: null, seededFolders: 3, rate: null, bulk: true, deadman: true, readOnlyMonths: null,
};

// A plan named in the other profile's words maps to its counterpart here.
const STANDARD_ALIASES: Record<string, string> = { paid: "personal", dev_pro: "team" };
const ALTERNATE_ALIASES: Record<string, string> = { personal: "paid", team: "dev_pro" };

export function tierFor(profile: LimitProfileName, plan: PlanName): Tier {
  if (profile === "unlimited") return UNLIMITED;
  if (profile === "standard") return standard[STANDARD_ALIASES[plan] ?? plan]!;
  return alternate[ALTERNATE_ALIASES[plan] ?? plan]!;
}

export const TRIAL_DAYS = 14;
export const TRIAL_NOTES = 100;
export const TRIAL_STORAGE = 300 * MB;
export const TRIAL_TOKENS = 3;
/** Days after a trial ends before notes above the free cap go to the trash. */
export const TRIAL_GRACE_DAYS = 30;
export const EXTENSION_APPENDS_PER_MINUTE = 60;
export const ANONYMOUS_PER_MINUTE = 60;

/**
 * API requests a minute per address without a valid token. The unlimited profile limits no API
 * request (a self-hoster choosing it expects none); the browser's sign-in and sign-up forms and
 * the other per-address guards against abuse keep their limits in every profile.
 */
export function anonymousPerMinute(profile: LimitProfileName): number {
  return profile === "unlimited" ? NO_RATE_LIMIT : ANONYMOUS_PER_MINUTE;
}

/**
 * The tier a workspace gets in its current state. During the API trial the REST API works
 * whatever the plan, with the trial's allotment; after it the trial's tokens stay readable.
 */
export function effectiveTier(profile: LimitProfileName, plan: PlanName, state: string): Tier {
  const base = tierFor(profile, plan);
  if (profile === "unlimited") return base;
  if (state === "trial" && !base.api) {
    return { ...base, api: true, notes: { shared: TRIAL_NOTES }, storage: TRIAL_STORAGE, tokens: TRIAL_TOKENS, rate: DEV_RATE };
  }
  if (state === "trial_ended" && !base.api) return { ...base, api: true, rate: DEV_RATE };
  return base;
}

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

/** The cap that applies to a note of this format, or null when uncapped. */
export function noteCapFor(tier: Tier, format: "plain" | "rich"): { limit: number; shared: boolean } | null {
  if (!tier.notes) return null;
  if ("shared" in tier.notes) return { limit: tier.notes.shared, shared: true };
  return { limit: format === "rich" ? tier.notes.rich : tier.notes.plain, shared: false };
}

export function bodyCapFor(tier: Tier, format: "plain" | "rich"): number | null {
  return format === "rich" ? tier.richPlain : tier.plainBody;
}

/** Inbox payloads: senders' webhooks are a few KB, and every stored body is kept for replay. */
export const INBOX_BODY_CAP = 256 * 1024;

/** Request body caps by surface, rejected at the HTTP boundary before anything parses them. */
export function bodyCaps(profile: LimitProfileName): { api: number; browser: number; billing: number; inbox: number } {
  return profile === "alternate"
    ? { api: 3 * MB, browser: 2 * MB, billing: 1 * MB, inbox: INBOX_BODY_CAP }
    : { api: 4 * MB, browser: 5 * MB, billing: 1 * MB, inbox: INBOX_BODY_CAP };
}

/** What "no rate limit" looks like in the X-RateLimit headers of the unlimited profile. */
export const NO_RATE_LIMIT = 1_000_000_000;
export const HEALTH_PER_MINUTE = 60;
export const BILLING_WEBHOOK_PER_MINUTE = 100;
