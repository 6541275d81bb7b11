/**
 * Every NOTESTREAM_* variable the server reads, with the value it takes when unset; null where
 * unset means off, none or derived (the README says which, in words). loadConfig takes its
 * defaults from here, and test/unit/config-variables.test.ts holds the README's configuration
 * table to the same names and defaults. The client commands' NOTESTREAM_URL and NOTESTREAM_TOKEN
 * are not the server's (serverAccess in src/config.ts).
 */
export const CONFIG_DEFAULTS = {
  NOTESTREAM_DATA_DIR: "./data",
  NOTESTREAM_PORT: "8080",
  NOTESTREAM_HOST: "0.0.0.0",
  NOTESTREAM_IDLE_TIMEOUT_SECONDS: "150",
  NOTESTREAM_BASE_URL: null,
  NOTESTREAM_LIMIT_PROFILE: "standard",
  NOTESTREAM_SYNCHRONOUS: "FULL",
  NOTESTREAM_LOG_REQUESTS: "true",
  NOTESTREAM_SMTP_URL: null,
  NOTESTREAM_MAIL_FROM: "notestream <notestream@localhost>",
  NOTESTREAM_MIN_INTERVAL_SECONDS: "60",
  NOTESTREAM_MCP_ALLOWED_ORIGINS: null,
  NOTESTREAM_SSE_MAX: "1000",
  NOTESTREAM_TRUST_PROXY: "false",
  NOTESTREAM_TRUST_PROXY_HEADERS: "x-forwarded",
  NOTESTREAM_DISK_RESERVE_MB: "8",
  NOTESTREAM_METRICS_TOKEN: null,
  NOTESTREAM_BILLING_SECRET: null,
  NOTESTREAM_BILLING_VARIANTS: null,
  NOTESTREAM_BILLING_CHECKOUT_URLS: null,
  NOTESTREAM_LEMONSQUEEZY_API_KEY: null,
  NOTESTREAM_LEMONSQUEEZY_STORE_ID: null,
  NOTESTREAM_LEMONSQUEEZY_VARIANTS: null,
  NOTESTREAM_LEMONSQUEEZY_API_URL: "https://api.lemonsqueezy.com/v1",
  NOTESTREAM_WEBHOOK_ALLOW_CIDRS: null,
  NOTESTREAM_WEBHOOK_TIMEOUT_MS: "10000",
  NOTESTREAM_TELEGRAM_API_URL: "https://api.telegram.org",
  NOTESTREAM_PUSHOVER_API_URL: "https://api.pushover.net",
  NOTESTREAM_JOB_CONCURRENCY: "8",
  NOTESTREAM_RETRY_SCALE: "1",
  NOTESTREAM_JOB_LEASE_SECONDS: "60",
  NOTESTREAM_DATABASE_URL: null,
  NOTESTREAM_DATABASE_POOL: "10",
} as const satisfies Record<`NOTESTREAM_${string}`, string | null>;

/** The variables that have a value when unset. */
export type DefaultedVariable = { [N in keyof typeof CONFIG_DEFAULTS]: (typeof CONFIG_DEFAULTS)[N] extends string ? N : never }[keyof typeof CONFIG_DEFAULTS];
