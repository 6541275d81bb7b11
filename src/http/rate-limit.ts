import { NO_RATE_LIMIT } from "../limits/plans";
import { AppError } from "./errors";
import type { Clock } from "../lib/clock";

export type Bucket = "reads" | "writes" | "appends" | "anonymous";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** UTC epoch seconds at which the window resets. */
  reset: number;
  bucket: Bucket;
}


interface Counter {
  windowMs: number;
  window: number;
  count: number;
}

/**
 * Counts requests in fixed windows. In memory for SQLite's one server (`RateLimiter`); in the
 * database when instances share PostgreSQL (`PgRateLimiter`, rate-limit-pg.ts), so a window is
 * counted once across all of them. A decision from memory is at hand; from the database, a promise.
 */
export interface Limiter {
  /** Counts one request against `key` and says whether it is within `limit` per window (a minute by default). */
  consume(key: string, limit: number, bucket: Bucket, windowMs?: number): RateDecision | Promise<RateDecision>;
  /** Gives back a request counted provisionally (an anonymous slot taken before a token proved good). */
  refund(key: string, windowMs?: number): void;
  /** Forgets windows that have ended (the database's; memory prunes itself as it goes). */
  forgetEnded?(): Promise<number>;
}

/** The decision for the `count`th request of a window (counted, refused ones too, by the database). */
export function decide(count: number, limit: number, bucket: Bucket, window: number, windowMs: number): RateDecision {
  const reset = ((window + 1) * windowMs) / 1000;
  if (count > limit) return { allowed: false, limit, remaining: 0, reset, bucket };
  return { allowed: true, limit, remaining: limit - count, reset, bucket };
}

export const RATE_WINDOW_MS = 60_000;
const WINDOW_MS = RATE_WINDOW_MS;

/**
 * Fixed one-minute windows counted in memory: no database write per request, and exact under
 * concurrency because JavaScript runs one request's check-and-increment at a time.
 */
export class RateLimiter implements Limiter {
  private counters = new Map<string, Counter>();
  private currentWindow = 0;

  constructor(private readonly clock: Clock) {}

  /** Counts one request against `key` and says whether it is within `limit` per window (a minute by default). */
  consume(key: string, limit: number, bucket: Bucket, windowMs = WINDOW_MS): RateDecision {
    this.prune();
    const window = Math.floor(this.clock.now() / windowMs);
    let c = this.counters.get(key);
    if (!c || c.window !== window || c.windowMs !== windowMs) {
      c = { windowMs, window, count: 0 };
      this.counters.set(key, c);
    }
    const reset = ((window + 1) * windowMs) / 1000;
    if (c.count >= limit) return { allowed: false, limit, remaining: 0, reset, bucket };
    c.count++;
    return { allowed: true, limit, remaining: limit - c.count, reset, bucket };
  }

  /** Gives back a request counted provisionally (an anonymous slot taken before a token proved good). */
  refund(key: string): void {
    const c = this.counters.get(key);
    if (c && c.window === Math.floor(this.clock.now() / c.windowMs) && c.count > 0) c.count--;
  }

  private prune(): void {
    const minute = Math.floor(this.clock.now() / WINDOW_MS);
    if (minute === this.currentWindow) return;
    // Once a minute: counters of past windows are dead weight.
    this.currentWindow = minute;
    const now = this.clock.now();
    for (const [k, c] of this.counters) if (c.window < Math.floor(now / c.windowMs)) this.counters.delete(k);
  }
}

export type TokenBucket = Exclude<Bucket, "anonymous">;
const tokenKeys = new Map<string, Record<TokenBucket, string>>();

/** The limiter's key for a token's bucket (REST and MCP count together), built once per token. */
export function tokenRateKey(tokenId: string, bucket: TokenBucket): string {
  let keys = tokenKeys.get(tokenId);
  if (!keys) {
    if (tokenKeys.size >= 50_000) tokenKeys.clear();
    keys = { reads: `tok:${tokenId}:reads`, writes: `tok:${tokenId}:writes`, appends: `tok:${tokenId}:appends` };
    tokenKeys.set(tokenId, keys);
  }
  return keys[bucket];
}

export function rateHeaders(d: RateDecision, now: number): Record<string, string> {
  const h: Record<string, string> = {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(d.reset),
    "x-ratelimit-bucket": d.bucket,
  };
  if (!d.allowed) h["retry-after"] = String(Math.max(1, Math.ceil(d.reset - now / 1000)));
  return h;
}

/**
 * A token's budget a minute in one bucket, for REST and MCP alike: its plan's, or no limit
 * where the plan sets none (the unlimited profile), with the headers still numeric.
 */
export function rateFor(principal: { rate: Partial<Record<TokenBucket, number>> | null }, bucket: TokenBucket): number {
  return principal.rate?.[bucket] ?? NO_RATE_LIMIT;
}

export function rateLimited(d: RateDecision): AppError {
  const who = d.bucket === "anonymous" ? "requests without a valid token from this address" : `${d.bucket} for this token`;
  return new AppError("rate_limited", `rate limit of ${d.limit} ${who} per minute reached; retry after the reset`);
}
