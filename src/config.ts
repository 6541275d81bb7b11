// The environment, read once at start into a typed Config; every NOTESTREAM_* default is in
// config/variables.ts, and the parsers of the larger groups (PostgreSQL, billing) beside it.
import { resolve } from "node:path";
import { parseCidr, type Cidr } from "./lib/ip";
import { LIMIT_PROFILES, type LimitProfileName } from "./limits/plans";
import { parseBilling, type BillingConfig } from "./config/billing";
import { ConfigError, parseBool, parseNumber, parseWhole } from "./config/parse";
import { parsePostgres, type PostgresConfig } from "./config/postgres";
import { CONFIG_DEFAULTS, type DefaultedVariable } from "./config/variables";

export type { LemonSqueezyConfig } from "./config/billing";
export { ConfigError } from "./config/parse";
export { maskPassword, type PostgresConfig, type PostgresSslMode } from "./config/postgres";

export type TrustProxyHeaders = "x-forwarded" | "forwarded";

export interface Config extends BillingConfig {
  dataDir: string;
  port: number;
  host: string;
  /**
   * Seconds an HTTP connection may sit idle (between requests, or trickling one) before it is
   * closed. Above the idle time of the proxies' pools of upstream connections (Caddy 120 s,
   * Traefik 90 s, nginx and AWS load balancers 60 s), so the proxy, not notestream, retires a pooled
   * connection: the other way round, a request the proxy sends as notestream closes that connection
   * fails with 502, and a POST is not retried.
   */
  idleTimeoutSeconds: number;
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
  /** Origins of Telegram's Bot API and Pushover's API for channels (tests point them at loopback stand-ins). */
  telegramApiUrl: string;
  pushoverApiUrl: string;
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

/** The environment as a Config, each variable's default from CONFIG_DEFAULTS; a ConfigError names the first one that cannot be used. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const read = (name: DefaultedVariable): string => env[name] ?? CONFIG_DEFAULTS[name];
  const port = parsePort(read("NOTESTREAM_PORT"));
  const profile = read("NOTESTREAM_LIMIT_PROFILE") as LimitProfileName;
  if (!LIMIT_PROFILES.includes(profile)) {
    throw new ConfigError(`NOTESTREAM_LIMIT_PROFILE must be one of ${LIMIT_PROFILES.join(", ")}, got "${profile}"`);
  }
  const sync = read("NOTESTREAM_SYNCHRONOUS").toUpperCase();
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
    dataDir: resolve(read("NOTESTREAM_DATA_DIR")),
    port,
    host: read("NOTESTREAM_HOST"),
    // Bun's own limit is 255 s; 0 (never) would let idle connections pile up.
    idleTimeoutSeconds: parseWhole("NOTESTREAM_IDLE_TIMEOUT_SECONDS", read("NOTESTREAM_IDLE_TIMEOUT_SECONDS"), 1, 255),
    baseUrl: baseUrl ? baseUrl.replace(/\/+$/, "") : null,
    mcpAllowedOrigins: parseOrigins(env.NOTESTREAM_MCP_ALLOWED_ORIGINS),
    limitProfile: profile,
    synchronous: sync,
    logRequests: parseBool("NOTESTREAM_LOG_REQUESTS", read("NOTESTREAM_LOG_REQUESTS")),
    trustProxy: parseTrustProxy(read("NOTESTREAM_TRUST_PROXY")),
    trustProxyHeaders: parseTrustProxyHeaders(env.NOTESTREAM_TRUST_PROXY_HEADERS),
    billingSecret: env.NOTESTREAM_BILLING_SECRET || null,
    ...parseBilling(env),
    webhookAllow: parseCidrs(env.NOTESTREAM_WEBHOOK_ALLOW_CIDRS ?? ""),
    retryScale: parseNumber("NOTESTREAM_RETRY_SCALE", read("NOTESTREAM_RETRY_SCALE"), 0, 100),
    jobLeaseMs: parseWhole("NOTESTREAM_JOB_LEASE_SECONDS", read("NOTESTREAM_JOB_LEASE_SECONDS"), 1, 86_400) * 1000,
    telegramApiUrl: parseApiOrigin("NOTESTREAM_TELEGRAM_API_URL", read("NOTESTREAM_TELEGRAM_API_URL")),
    pushoverApiUrl: parseApiOrigin("NOTESTREAM_PUSHOVER_API_URL", read("NOTESTREAM_PUSHOVER_API_URL")),
    smtpUrl: parseSmtpUrl(env.NOTESTREAM_SMTP_URL),
    mailFrom: env.NOTESTREAM_MAIL_FROM?.trim() || CONFIG_DEFAULTS.NOTESTREAM_MAIL_FROM,
    minIntervalSeconds: parseNumber("NOTESTREAM_MIN_INTERVAL_SECONDS", read("NOTESTREAM_MIN_INTERVAL_SECONDS"), 1, 86_400),
    webhookTimeoutMs: parseNumber("NOTESTREAM_WEBHOOK_TIMEOUT_MS", read("NOTESTREAM_WEBHOOK_TIMEOUT_MS"), 100, 120_000),
    jobConcurrency: parseNumber("NOTESTREAM_JOB_CONCURRENCY", read("NOTESTREAM_JOB_CONCURRENCY"), 1, 256),
    sseMax: parseWhole("NOTESTREAM_SSE_MAX", read("NOTESTREAM_SSE_MAX"), 0, 100_000),
    metricsToken: parseMetricsToken(env.NOTESTREAM_METRICS_TOKEN),
    diskReserveBytes: parseWhole("NOTESTREAM_DISK_RESERVE_MB", read("NOTESTREAM_DISK_RESERVE_MB"), 0, 65_536) * 1024 * 1024,
    postgres: parsePostgres(env.NOTESTREAM_DATABASE_URL, read("NOTESTREAM_DATABASE_POOL")),
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
  const v = (raw ?? "").trim().toLowerCase() || CONFIG_DEFAULTS.NOTESTREAM_TRUST_PROXY_HEADERS;
  if (v === "x-forwarded" || v === "forwarded") return v;
  throw new ConfigError(`NOTESTREAM_TRUST_PROXY_HEADERS must be x-forwarded (nginx, Caddy, Traefik) or forwarded (RFC 7239), got "${raw}"`);
}

function parseOrigins(raw: string | undefined): ReadonlySet<string> | null {
  const list = (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) return null;
  for (const o of list) {
    if (!URL.canParse(o) || new URL(o).origin !== o) throw new ConfigError(`NOTESTREAM_MCP_ALLOWED_ORIGINS: "${o}" is not an origin like https://app.example.com`);
  }
  return new Set(list);
}

/** An API's base URL: http(s), without a trailing slash (paths are added to it). */
function parseApiOrigin(name: string, raw: string): string {
  const value = raw.trim().replace(/\/+$/, "");
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new ConfigError(`${name}: "${raw}" is not an http or https URL`);
  return value;
}
