import http from "node:http";
import https from "node:https";
import { formatIp, parseIp } from "../../lib/ip";

export const CONNECT_TIMEOUT_MS = 5_000;
export const TOTAL_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 8 * 1024;

export interface PostResult {
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  /** At most 8 KB of the answer. */
  body: string;
  error: string | null;
  durationMs: number;
}

/**
 * Request options that reach `url` at `target` (an address checked beforehand): the name stays
 * for the Host header and TLS, no resolver runs again (so no DNS rebinding), no keep-alive pool.
 */
export function pinnedRequest(url: URL, target: { address: string; family: 4 | 6 }, method: "GET" | "POST" | "PUT", headers: Record<string, string>): https.RequestOptions {
  return {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port || (url.protocol === "https:" ? 443 : 80),
    path: url.pathname + url.search,
    method,
    headers,
    lookup: ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) =>
      opts?.all ? cb(null, [{ address: target.address, family: target.family }]) : cb(null, target.address, target.family)) as never,
    agent: false,
  };
}

/**
 * POSTs (or PUTs) to `url` but connects to `address` (checked beforehand), keeping the name for the Host
 * header and TLS. Redirects are not followed; the answer is read up to 8 KB.
 */
export function postTo(
  url: URL,
  target: { address: string; family: 4 | 6 },
  body: string,
  headers: Record<string, string>,
  timeouts = { connect: CONNECT_TIMEOUT_MS, total: TOTAL_TIMEOUT_MS },
  method: "POST" | "PUT" = "POST",
): Promise<PostResult> {
  const started = performance.now();
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<PostResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      resolve({ ...r, durationMs: Math.round(performance.now() - started) });
    };
    const req = client.request(
      pinnedRequest(url, target, method, { ...headers, "content-length": String(Buffer.byteLength(body)) }),
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - size));
          size += c.length;
          if (size >= MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () =>
          finish({ status: res.statusCode ?? null, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), error: null });
        res.on("end", done);
        res.on("close", done);
        res.on("error", done);
      },
    );
    const connect = setTimeout(() => req.destroy(new Error(`no connection within ${timeouts.connect} ms`)), timeouts.connect);
    const total = setTimeout(() => req.destroy(new Error(`no answer within ${timeouts.total} ms`)), timeouts.total);
    req.on("socket", (s) => s.on("connect", () => clearTimeout(connect)));
    req.on("error", (e) => finish({ status: null, headers: {}, body: "", error: withHostFor(e.message, target.address, url.hostname) }));
    req.end(body);
  });
}

/**
 * Socket errors name the address connected to ("connect ECONNREFUSED 10.0.0.5:80"); the
 * deliveries log shows the URL's host in its place, so it never tells what a name resolved to.
 */
function withHostFor(message: string, address: string, host: string): string {
  const ip = parseIp(address);
  const spellings = [...new Set([address, ...(ip ? [formatIp(ip), ip.toString()] : [])])].sort((a, b) => b.length - a.length);
  return spellings.reduce((m, s) => m.split(s).join(host), message);
}

const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry-After in seconds or as an HTTP date, on 429 and 503, capped at an hour. */
export function retryAfterMs(r: PostResult): number | undefined {
  if (r.status !== 429 && r.status !== 503) return undefined;
  const raw = r.headers["retry-after"];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}
