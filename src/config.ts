import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseCidr, type Cidr } from "./lib/ip";
import { isPlanName, LIMIT_PROFILES, type LimitProfileName, type PlanName } from "./limits/plans";

export type TrustProxyHeaders = "x-forwarded" | "forwarded";

export interface Config {
  dataDir: string;
  port: number;
  host: string;
  baseUrl: string | null;
  /** Origins browser-based MCP clients may call /mcp and the OAuth endpoints from; null for any (they carry a Bearer token, no cookie). */
  mcpAllowedOrigins: ReadonlySet<string> | null;
  limitProfile: LimitProfileName;
  /** "FULL" makes every acknowledged write survive power loss; "NORMAL" trades that for speed. */
  synchronous: "FULL" | "NORMAL";
  logRequests: boolean;
  /** How many reverse proxies stand in front: the client's address and origin are that many hops from the right of the forwarded headers. 0 ignores them. */
  trustProxy: number;
  /** Which forwarded headers the trusted proxies write: X-Forwarded-* (nginx, Caddy, Traefik) or Forwarded (RFC 7239); the other family is ignored. */
  trustProxyHeaders: TrustProxyHeaders;
  /** HMAC key of the billing provider's webhook; unset, the webhook refuses every delivery. */
  billingSecret: string | null;
  /** Lemon Squeezy variant id → the plan it sells: the only source of a subscription's plan. */
  billingVariants: ReadonlyMap<number, PlanName>;
  /** The store's checkout link of each plan on sale; a started checkout adds its id to it. */
  billingCheckoutUrls: ReadonlyMap<PlanName, string>;
  /** Lemon Squeezy's API: set, billing is on (the account page's plan checkouts and customer portal). */
  lemonSqueezy: LemonSqueezyConfig | null;
  /** Ranges outbound webhooks may reach although they are not public (homelab targets, tests). */
  webhookAllow: Cidr[];
  /** Multiplies every job retry delay; below 1 only for tests. */
  retryScale: number;
  /** How long a claimed job is its runner's before another may take it over (a runner that died). */
  jobLeaseMs: number;
  /** Jobs (webhook deliveries, inbox payloads) run at once at most. */
  jobConcurrency: number;
  /** Total time one webhook delivery may take; connecting gets at most 5 s of it. */
  webhookTimeoutMs: number;
  /** smtp:// or smtps:// URL; null writes mail to <data dir>/outbox/ instead. */
  smtpUrl: string | null;
  mailFrom: string;
  /** Shortest dead-man interval a note may set, in seconds. */
  minIntervalSeconds: number;
  /** Streams followed live (Server-Sent Events) at once by this process; a workspace holds a tenth of it, at least 10 (streams/follow.ts). 0 turns following off. */
  sseMax: number;
  /** Bearer token of GET /metrics; null turns the endpoint off (404). */
  metricsToken: string | null;
  /** NOTESTREAM_DISK_RESERVE_MB, in bytes: what the serving process holds back on SQLite's disk for deletes (db/disk-space.ts). */
  diskReserveBytes: number;
  /** NOTESTREAM_DATABASE_URL: PostgreSQL instead of SQLite under the data dir; null for SQLite. */
  postgres: PostgresConfig | null;
}

/** libpq's sslmode values, meaning what they mean there (docs/SCALING.md). */
export type PostgresSslMode = "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full";

export interface PostgresConfig {
  /** What Bun.SQL connects with, the TLS parameters taken out (src/db/pg/client.ts passes them). It holds the password: log `display`, never this. */
  url: string;
  /** user@host:port/database, without the password: for log lines and errors. */
  display: string;
  database: string;
  /** The mode connections use: the URL's sslmode, raised to verify-ca by an sslrootcert file (as libpq checks the chain then). */
  sslmode: PostgresSslMode;
  /** The PEM certificates of sslrootcert=<file>, read at start: the CAs the server's certificate is checked against; null for the built-in public CAs. */
  ca: string | null;
  /** sslcert and sslkey, read at start: the client certificate (PEM) and its private key, for a server that asks for one; both or neither. */
  clientCert: { cert: string; key: string } | null;
  /** Connections in the pool (NOTESTREAM_DATABASE_POOL). */
  pool: number;
}

export interface LemonSqueezyConfig {
  apiKey: string;
  storeId: string;
  /** Base URL of the API, without a trailing slash. */
  apiUrl: string;
  /** The one variant a checkout of each plan sells. */
  checkoutVariants: ReadonlyMap<PlanName, number>;
}

export class ConfigError extends Error {}

/** Every NOTESTREAM_* variable, its default and what it does; the README table is written from this. */
export const CONFIG_VARIABLES = [
  ["NOTESTREAM_DATA_DIR", "./data", "Directory for the SQLite database and other files."],
  ["NOTESTREAM_PORT", "8080", "TCP port to listen on."],
  ["NOTESTREAM_HOST", "0.0.0.0", "Address to bind."],
  ["NOTESTREAM_BASE_URL", "http://localhost:<port>", "Public URL of the service, used in links it hands out."],
  ["NOTESTREAM_LIMIT_PROFILE", "standard", "Plan limits: standard, alternate or unlimited."],
  ["NOTESTREAM_SYNCHRONOUS", "FULL", "FULL: answered only once on disk (WAL fdatasync); NORMAL: once committed."],
  ["NOTESTREAM_LOG_REQUESTS", "true", "One JSON log line per request on stdout, written in batches at most 10 ms late (true or false)."],
  ["NOTESTREAM_BILLING_SECRET", "(unset)", "Signing secret of the Lemon Squeezy webhook; unset, /webhooks/lemonsqueezy answers 401."],
  ["NOTESTREAM_BILLING_VARIANTS", "(none)", "Lemon Squeezy variant ids and the plan each sells, e.g. 123456:personal,123457:dev,123458:team; events of other variants change nothing."],
  ["NOTESTREAM_BILLING_CHECKOUT_URLS", "(none)", "The store's checkout link of each plan, e.g. personal=https://STORE.lemonsqueezy.com/checkout/buy/UUID,dev=…; for notestream billing checkout."],
  ["NOTESTREAM_LEMONSQUEEZY_API_KEY", "(unset)", "Lemon Squeezy API key; with the store id and the variants it turns billing on: the account page sells plans through checkouts the service creates, and subscribers get the customer portal."],
  ["NOTESTREAM_LEMONSQUEEZY_STORE_ID", "(unset)", "The Lemon Squeezy store (its number) checkouts are created in."],
  ["NOTESTREAM_LEMONSQUEEZY_VARIANTS", "(none)", "The variant each plan's checkout sells, plan:variant_id, e.g. personal:123456,dev:123457,team:123458; the webhook maps these too, and for a variant also in NOTESTREAM_BILLING_VARIANTS this one wins."],
  ["NOTESTREAM_LEMONSQUEEZY_API_URL", "https://api.lemonsqueezy.com/v1", "Base URL of Lemon Squeezy's API (a stand-in for tests)."],
  ["NOTESTREAM_WEBHOOK_ALLOW_CIDRS", "(none)", "Comma-separated ranges outbound webhooks (and MCP clients' metadata documents) may reach although not public, e.g. 192.168.1.0/24 for a homelab."],
  ["NOTESTREAM_JOB_CONCURRENCY", "8", "How many jobs (webhook deliveries, inbox payloads) run at once."],
  ["NOTESTREAM_WEBHOOK_TIMEOUT_MS", "10000", "Total time one outbound webhook delivery may take (connecting: at most 5 s of it)."],
  ["NOTESTREAM_RETRY_SCALE", "1", "Multiplies job retry delays (10 s, 30 s, 2 min, …); for tests."],
  ["NOTESTREAM_JOB_LEASE_SECONDS", "60", "How long a claimed job (a webhook delivery, a mail) is its instance's before another instance takes it over; keep it above the webhook timeout."],
  ["NOTESTREAM_SMTP_URL", "(unset)", "smtp:// or smtps:// URL with credentials (smtps://user:pass@host:465); unset, mail is written to <data dir>/outbox/*.eml."],
  ["NOTESTREAM_MAIL_FROM", "notestream <notestream@localhost>", "Sender of the mail notestream sends."],
  ["NOTESTREAM_MIN_INTERVAL_SECONDS", "60", "Shortest dead-man interval a note may set (lower it for tests)."],
  ["NOTESTREAM_MCP_ALLOWED_ORIGINS", "(any)", "Comma-separated origins browser-based MCP clients may call /mcp and the OAuth endpoints from (CORS); unset, any origin (they authenticate with a Bearer token, no cookie)."],
  ["NOTESTREAM_SSE_MAX", "1000", "Streams followed live (Server-Sent Events) at once by each process; one workspace may hold a tenth of them (at least 10), one token 10; past any of these 429 (0 turns following off)."],
  ["NOTESTREAM_TRUST_PROXY", "false", "Behind a reverse proxy: true (one proxy) or the number of proxies; forwarded headers are ignored otherwise."],
  ["NOTESTREAM_TRUST_PROXY_HEADERS", "x-forwarded", "The forwarded headers the trusted proxy writes: x-forwarded (X-Forwarded-For, -Proto, -Host: nginx, Caddy, Traefik) or forwarded (RFC 7239 Forwarded); the other family is ignored, so a client's own cannot pass through the proxy."],
  ["NOTESTREAM_METRICS_TOKEN", "(unset)", "Turns on GET /metrics (Prometheus text format), for requests with this Bearer token; unset, /metrics is 404."],
  ["NOTESTREAM_DISK_RESERVE_MB", "8", "SQLite: megabytes the server holds back in <data dir>/notestream.reserve and gives up when the disk fills, so that deleting and purging notes still work (0: none)."],
  ["NOTESTREAM_DATABASE_URL", "(unset)", "postgres://user:pass@host:5432/db?sslmode=disable|allow|prefer|require|verify-ca|verify-full&sslrootcert=/path/ca.pem (&sslcert=…&sslkey=… for a client certificate) serves from PostgreSQL instead, as any number of instances (docs/SCALING.md); unset, SQLite under the data dir."],
  ["NOTESTREAM_DATABASE_POOL", "10", "Connections to PostgreSQL each process keeps at most."],
] as const;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = parsePort(env.NOTESTREAM_PORT ?? "8080");
  const profile = (env.NOTESTREAM_LIMIT_PROFILE ?? "standard") as LimitProfileName;
  if (!LIMIT_PROFILES.includes(profile)) {
    throw new ConfigError(`NOTESTREAM_LIMIT_PROFILE must be one of ${LIMIT_PROFILES.join(", ")}, got "${profile}"`);
  }
  const sync = (env.NOTESTREAM_SYNCHRONOUS ?? "FULL").toUpperCase();
  if (sync !== "FULL" && sync !== "NORMAL") {
    throw new ConfigError(`NOTESTREAM_SYNCHRONOUS must be FULL or NORMAL, got "${sync}"`);
  }
  const baseUrl = env.NOTESTREAM_BASE_URL?.trim() || null;
  if (baseUrl && !/^https?:\/\/[^\s/]+/.test(baseUrl)) {
    throw new ConfigError(`NOTESTREAM_BASE_URL must be an http(s) URL, got "${baseUrl}"`);
  }
  // Serving under a path (https://example.com/notes) would need every link, cookie path, page and
  // OAuth metadata rewritten; it is refused rather than half working. Use a (sub)domain.
  if (baseUrl && URL.canParse(baseUrl) && !["", "/"].includes(new URL(baseUrl).pathname)) {
    throw new ConfigError(`NOTESTREAM_BASE_URL must be an origin without a path (got "${baseUrl}"); serve notestream at the root of its own host name`);
  }
  return {
    dataDir: resolve(env.NOTESTREAM_DATA_DIR ?? "./data"),
    port,
    host: env.NOTESTREAM_HOST ?? "0.0.0.0",
    baseUrl: baseUrl ? baseUrl.replace(/\/+$/, "") : null,
    mcpAllowedOrigins: parseOrigins(env.NOTESTREAM_MCP_ALLOWED_ORIGINS),
    limitProfile: profile,
    synchronous: sync,
    logRequests: parseBool("NOTESTREAM_LOG_REQUESTS", env.NOTESTREAM_LOG_REQUESTS ?? "true"),
    trustProxy: parseTrustProxy(env.NOTESTREAM_TRUST_PROXY ?? "false"),
    trustProxyHeaders: parseTrustProxyHeaders(env.NOTESTREAM_TRUST_PROXY_HEADERS),
    billingSecret: env.NOTESTREAM_BILLING_SECRET || null,
    ...parseBilling(env),
    webhookAllow: parseCidrs(env.NOTESTREAM_WEBHOOK_ALLOW_CIDRS ?? ""),
    retryScale: parseNumber("NOTESTREAM_RETRY_SCALE", env.NOTESTREAM_RETRY_SCALE ?? "1", 0, 100),
    jobLeaseMs: parseWhole("NOTESTREAM_JOB_LEASE_SECONDS", env.NOTESTREAM_JOB_LEASE_SECONDS ?? "60", 1, 86_400) * 1000,
    smtpUrl: parseSmtpUrl(env.NOTESTREAM_SMTP_URL),
    mailFrom: env.NOTESTREAM_MAIL_FROM?.trim() || "notestream <notestream@localhost>",
    minIntervalSeconds: parseNumber("NOTESTREAM_MIN_INTERVAL_SECONDS", env.NOTESTREAM_MIN_INTERVAL_SECONDS ?? "60", 1, 86_400),
    webhookTimeoutMs: parseNumber("NOTESTREAM_WEBHOOK_TIMEOUT_MS", env.NOTESTREAM_WEBHOOK_TIMEOUT_MS ?? "10000", 100, 120_000),
    jobConcurrency: parseNumber("NOTESTREAM_JOB_CONCURRENCY", env.NOTESTREAM_JOB_CONCURRENCY ?? "8", 1, 256),
    sseMax: parseWhole("NOTESTREAM_SSE_MAX", env.NOTESTREAM_SSE_MAX ?? "1000", 0, 100_000),
    metricsToken: parseMetricsToken(env.NOTESTREAM_METRICS_TOKEN),
    diskReserveBytes: parseWhole("NOTESTREAM_DISK_RESERVE_MB", env.NOTESTREAM_DISK_RESERVE_MB ?? "8", 0, 65_536) * 1024 * 1024,
    postgres: parsePostgres(env.NOTESTREAM_DATABASE_URL, env.NOTESTREAM_DATABASE_POOL),
  };
}

/**
 * The database this process serves from, decided from the environment alone: "postgres" when
 * NOTESTREAM_DATABASE_URL holds anything but blanks, as `loadConfig` reads it, else "sqlite". For
 * code that must know before a Config exists (the tables chosen when src/db/tables.ts loads).
 */
export function databaseKind(env: Record<string, string | undefined> = process.env): "sqlite" | "postgres" {
  return env.NOTESTREAM_DATABASE_URL?.trim() ? "postgres" : "sqlite";
}

/**
 * Where the client commands (append, tail, ls, cat, run) and `notestream mcp` reach a running
 * server: NOTESTREAM_URL (http://localhost:8080 when unset) with the token NOTESTREAM_TOKEN ("" when
 * unset: each says how to get one).
 */
export function serverAccess(env: Record<string, string | undefined> = process.env): { url: string; token: string } {
  return { url: env.NOTESTREAM_URL?.trim() || "http://localhost:8080", token: env.NOTESTREAM_TOKEN?.trim() ?? "" };
}

const SSL_MODES: readonly PostgresSslMode[] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** A database URL with its password replaced, for messages: the password is never printed. */
export function maskPassword(url: string): string {
  // Up to the last @: a password with an unencoded @ in it is still hidden whole.
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):.*@/i, "$1:***@");
}

function parsePostgres(raw: string | undefined, poolRaw: string | undefined): PostgresConfig | null {
  const pool = parseWhole("NOTESTREAM_DATABASE_POOL", poolRaw ?? "10", 1, 1000);
  const text = raw?.trim();
  if (!text) return null;
  const shown = `"${maskPassword(text)}"`;
  const example = "postgres://user:password@host:5432/notestream?sslmode=require";
  // Not echoed: where it does not parse, the masking cannot be sure where the password ends.
  if (!URL.canParse(text)) throw new ConfigError(`NOTESTREAM_DATABASE_URL is not a URL like ${example} (percent-encode @ : / ? # in the password)`);
  const url = new URL(text);
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(`NOTESTREAM_DATABASE_URL must be a postgres:// or postgresql:// URL (unset it for SQLite), got ${shown}`);
  }
  if (!url.hostname) throw new ConfigError(`NOTESTREAM_DATABASE_URL names no host, got ${shown}; like ${example}`);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!database || database.includes("/")) throw new ConfigError(`NOTESTREAM_DATABASE_URL must name one database after the host, like ${example}, got ${shown}`);
  let sslmode: PostgresSslMode | null = null;
  let rootcert: string | null = null;
  const client: { sslcert?: string; sslkey?: string } = {};
  for (const [name, value] of url.searchParams) {
    if (name === "sslmode") {
      if (!SSL_MODES.includes(value as PostgresSslMode)) {
        throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got "${value}"`);
      }
      sslmode = value as PostgresSslMode;
    } else if (name === "sslrootcert") {
      rootcert = value;
    } else if (name === "sslcert" || name === "sslkey") {
      client[name] = value;
    } else {
      throw new ConfigError(`NOTESTREAM_DATABASE_URL: unknown parameter "${name}" (only sslmode, sslrootcert, sslcert and sslkey are read), got ${shown}`);
    }
  }
  const tls = sslRoot(sslmode, rootcert);
  const clientCert = sslClient(tls.sslmode, client);
  url.search = "";
  const user = decodeURIComponent(url.username);
  return {
    url: url.toString(),
    display: `${user ? `${user}@` : ""}${url.host}/${database}`,
    database,
    ...tls,
    clientCert,
    pool,
  };
}

/**
 * sslrootcert as libpq reads it: a PEM file of the CAs that sign the server's certificate (a
 * managed database's CA bundle), which makes prefer, allow and require check the chain as
 * verify-ca does (here they then insist on TLS: a CA named means an encrypted connection is
 * wanted); or `system`, the publicly trusted CAs, which asks for verify-full. The file is read
 * now, so a wrong path stops the start instead of every connection.
 */
function sslRoot(mode: PostgresSslMode | null, rootcert: string | null): { sslmode: PostgresSslMode; ca: string | null } {
  if (rootcert === null) return { sslmode: mode ?? "prefer", ca: null };
  if (rootcert === "system") {
    if (mode !== null && mode !== "verify-full") {
      throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslrootcert=system checks the host name too, so it needs sslmode=verify-full (or no sslmode), got "${mode}"`);
    }
    return { sslmode: "verify-full", ca: null };
  }
  if (mode === "disable") throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslrootcert names CAs for TLS, but sslmode=disable turns TLS off`);
  const pem = readPem("sslrootcert", rootcert, "CERTIFICATE");
  return { sslmode: mode === "verify-full" ? "verify-full" : "verify-ca", ca: pem };
}

/**
 * sslcert and sslkey as libpq reads them: the client certificate a server asks for (pg_hba's
 * `cert`, `clientcert=verify-full`), and its unencrypted private key. Like a CA file, they mean
 * TLS: prefer and allow then insist on it.
 */
function sslClient(mode: PostgresSslMode, given: { sslcert?: string; sslkey?: string }): { cert: string; key: string } | null {
  if (given.sslcert === undefined && given.sslkey === undefined) return null;
  if (given.sslcert === undefined || given.sslkey === undefined) {
    throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslcert and sslkey go together (the client certificate and its private key), got only ${given.sslcert === undefined ? "sslkey" : "sslcert"}`);
  }
  if (mode === "disable") throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslcert is a client certificate for TLS, but sslmode=disable turns TLS off`);
  const key = readPem("sslkey", given.sslkey, "PRIVATE KEY");
  if (key.includes("ENCRYPTED")) throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslkey "${given.sslkey}" is encrypted; give the key without a passphrase (openssl pkey -in key.pem -out plain.pem)`);
  return { cert: readPem("sslcert", given.sslcert, "CERTIFICATE"), key };
}

/** A PEM file named by the URL, read now so that a wrong path stops the start; `kind`: what its -----BEGIN line must name. */
function readPem(param: string, path: string, kind: "CERTIFICATE" | "PRIVATE KEY"): string {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`NOTESTREAM_DATABASE_URL: cannot read ${param} "${path}" (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const begins = kind === "CERTIFICATE" ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;
  if (!begins.test(pem)) throw new ConfigError(`NOTESTREAM_DATABASE_URL: ${param} "${path}" holds no PEM ${kind.toLowerCase()} (-----BEGIN ${kind}-----)`);
  return pem;
}

function parsePort(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(`NOTESTREAM_PORT must be a port number (0-65535), got "${raw}"`);
  }
  return n;
}

function parseSmtpUrl(raw: string | undefined): string | null {
  const url = raw?.trim();
  if (!url) return null;
  if (!/^smtps?:\/\/[^\s/]+/.test(url)) throw new ConfigError(`NOTESTREAM_SMTP_URL must be an smtp:// or smtps:// URL, got "${url.replace(/:[^:@/]*@/, ":***@")}"`);
  return url;
}

function parseCidrs(raw: string): Cidr[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      try {
        return parseCidr(s);
      } catch {
        throw new ConfigError(`NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "${s}" is not an address range like 192.168.1.0/24`);
      }
    });
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
function parseBilling(env: Record<string, string | undefined>): Pick<Config, "billingVariants" | "billingCheckoutUrls" | "lemonSqueezy"> {
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
  const apiUrl = (env.NOTESTREAM_LEMONSQUEEZY_API_URL?.trim() || "https://api.lemonsqueezy.com/v1").replace(/\/+$/, "");
  if (!/^https?:\/\/[^\s/#?]+[^\s#?]*$/.test(apiUrl) || !URL.canParse(apiUrl)) {
    throw new ConfigError(`NOTESTREAM_LEMONSQUEEZY_API_URL must be an http(s) URL without a query, got "${apiUrl}"`);
  }
  return { apiKey, storeId, apiUrl, checkoutVariants };
}

function parseNumber(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < min || n > max) throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  return n;
}

function parseWhole(name: string, raw: string, min: number, max: number): number {
  const n = parseNumber(name, raw, min, max);
  if (!Number.isInteger(n)) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

function parseMetricsToken(raw: string | undefined): string | null {
  const token = raw?.trim();
  if (!token) return null;
  // A Bearer token is one run of visible characters; a short one could be guessed.
  if (!/^[\x21-\x7e]{16,512}$/.test(token)) throw new ConfigError("NOTESTREAM_METRICS_TOKEN must be 16 to 512 visible ASCII characters without spaces (e.g. openssl rand -hex 32)");
  return token;
}

function parseTrustProxy(raw: string): number {
  if (/^\d+$/.test(raw) && Number(raw) <= 10) return Number(raw);
  try {
    return parseBool("NOTESTREAM_TRUST_PROXY", raw) ? 1 : 0;
  } catch {
    throw new ConfigError(`NOTESTREAM_TRUST_PROXY must be true, false or a number of proxies (0-10), got "${raw}"`);
  }
}

function parseTrustProxyHeaders(raw: string | undefined): TrustProxyHeaders {
  const v = (raw ?? "").trim().toLowerCase() || "x-forwarded";
  if (v === "x-forwarded" || v === "forwarded") return v;
  throw new ConfigError(`NOTESTREAM_TRUST_PROXY_HEADERS must be x-forwarded (nginx, Caddy, Traefik) or forwarded (RFC 7239), got "${raw}"`);
}

function parseBool(name: string, raw: string): boolean {
  const v = raw.toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function parseOrigins(raw: string | undefined): ReadonlySet<string> | null {
  const list = (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) return null;
  for (const o of list) {
    if (!URL.canParse(o) || new URL(o).origin !== o) throw new ConfigError(`NOTESTREAM_MCP_ALLOWED_ORIGINS: "${o}" is not an origin like https://app.example.com`);
  }
  return new Set(list);
}
