// The configuration table is written once, in src/config/variables.ts: loadConfig takes each
// default from it, and these tests hold the README's table and the parsers to it.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig } from "../../src/config";
import { CONFIG_DEFAULTS } from "../../src/config/variables";

const ROOT = resolve(import.meta.dir, "../..");

/** The README's configuration table: each variable with its default column as written. */
function readmeTable(): Map<string, string> {
  const rows = readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/^\| `(NOTESTREAM_[A-Z_]+)` \| ([^|]+) \|/gm);
  return new Map([...rows].map((m) => [m[1]!, m[2]!.trim()]));
}

describe("configuration variables", () => {
  test("the README's table lists exactly the variables of CONFIG_DEFAULTS", () => {
    expect([...readmeTable().keys()].sort()).toEqual(Object.keys(CONFIG_DEFAULTS).sort());
  });

  test("the README gives each variable the default loadConfig uses: the value in backticks, or words where unset means off or derived", () => {
    const table = readmeTable();
    for (const [name, fallback] of Object.entries(CONFIG_DEFAULTS)) {
      const shown = table.get(name) ?? "";
      expect([name, fallback === null ? !shown.startsWith("`") : shown === `\`${fallback}\``]).toEqual([name, true]);
    }
  });

  test("every NOTESTREAM_* variable the configuration code reads is in CONFIG_DEFAULTS", () => {
    const files = ["src/config.ts", ...readdirSync(join(ROOT, "src/config")).map((f) => `src/config/${f}`)];
    const read = new Set(files.flatMap((f) => [...readFileSync(join(ROOT, f), "utf8").matchAll(/env(?:\.|\[")(NOTESTREAM_[A-Z_]+)|read\("(NOTESTREAM_[A-Z_]+)"\)/g)].map((m) => m[1] ?? m[2]!)));
    const clientOnly = ["NOTESTREAM_URL", "NOTESTREAM_TOKEN"];
    expect([...read].filter((v) => !clientOnly.includes(v) && !(v in CONFIG_DEFAULTS)).sort()).toEqual([]);
  });

  test("with nothing set, the Config holds the table's defaults", () => {
    const c = loadConfig({});
    expect(c.dataDir).toBe(resolve(CONFIG_DEFAULTS.NOTESTREAM_DATA_DIR));
    expect(String(c.port)).toBe(CONFIG_DEFAULTS.NOTESTREAM_PORT);
    expect(c.host).toBe(CONFIG_DEFAULTS.NOTESTREAM_HOST);
    expect(String(c.idleTimeoutSeconds)).toBe(CONFIG_DEFAULTS.NOTESTREAM_IDLE_TIMEOUT_SECONDS);
    expect(c.limitProfile).toBe(CONFIG_DEFAULTS.NOTESTREAM_LIMIT_PROFILE);
    expect(c.synchronous).toBe(CONFIG_DEFAULTS.NOTESTREAM_SYNCHRONOUS);
    expect(String(c.logRequests)).toBe(CONFIG_DEFAULTS.NOTESTREAM_LOG_REQUESTS);
    expect(c.trustProxy).toBe(0);
    expect(c.trustProxyHeaders).toBe(CONFIG_DEFAULTS.NOTESTREAM_TRUST_PROXY_HEADERS);
    expect(c.mailFrom).toBe(CONFIG_DEFAULTS.NOTESTREAM_MAIL_FROM);
    expect(String(c.minIntervalSeconds)).toBe(CONFIG_DEFAULTS.NOTESTREAM_MIN_INTERVAL_SECONDS);
    expect(String(c.sseMax)).toBe(CONFIG_DEFAULTS.NOTESTREAM_SSE_MAX);
    expect(c.diskReserveBytes).toBe(Number(CONFIG_DEFAULTS.NOTESTREAM_DISK_RESERVE_MB) * 1024 * 1024);
    expect(String(c.webhookTimeoutMs)).toBe(CONFIG_DEFAULTS.NOTESTREAM_WEBHOOK_TIMEOUT_MS);
    expect(String(c.jobConcurrency)).toBe(CONFIG_DEFAULTS.NOTESTREAM_JOB_CONCURRENCY);
    expect(String(c.retryScale)).toBe(CONFIG_DEFAULTS.NOTESTREAM_RETRY_SCALE);
    expect(c.jobLeaseMs).toBe(Number(CONFIG_DEFAULTS.NOTESTREAM_JOB_LEASE_SECONDS) * 1000);
    expect([c.baseUrl, c.smtpUrl, c.metricsToken, c.mcpAllowedOrigins, c.billingSecret, c.lemonSqueezy, c.postgres]).toEqual([null, null, null, null, null, null, null]);
    expect([c.webhookAllow, c.billingVariants.size, c.billingCheckoutUrls.size]).toEqual([[], 0, 0]);
  });
});

describe("NOTESTREAM_IDLE_TIMEOUT_SECONDS", () => {
  test("by default a connection outlives the idle pools of the proxies the docs set up (Caddy 120 s, Traefik 90 s, nginx 60 s)", () => {
    expect(loadConfig({}).idleTimeoutSeconds).toBeGreaterThan(120);
  });

  test("a whole number of seconds from 1 to 255 (the runtime's limit); anything else is refused naming the variable", () => {
    expect(loadConfig({ NOTESTREAM_IDLE_TIMEOUT_SECONDS: "255" }).idleTimeoutSeconds).toBe(255);
    expect(loadConfig({ NOTESTREAM_IDLE_TIMEOUT_SECONDS: "1" }).idleTimeoutSeconds).toBe(1);
    for (const bad of ["0", "256", "1.5", "ten", ""]) expect(() => loadConfig({ NOTESTREAM_IDLE_TIMEOUT_SECONDS: bad })).toThrow("NOTESTREAM_IDLE_TIMEOUT_SECONDS");
  });
});
