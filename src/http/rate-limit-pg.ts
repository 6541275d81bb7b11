import type { SQL } from "bun";
import type { Clock } from "../lib/clock";
import { NO_RATE_LIMIT } from "../limits/plans";
import { decide, RATE_WINDOW_MS, type Bucket, type Limiter, type RateDecision } from "./rate-limit";

/** A count asked for: the request's key and window, and where its count goes. */
interface Counting {
  key: string;
  start: number;
  expires: number;
  resolve: (count: number) => void;
  reject: (e: unknown) => void;
}

/**
 * Rate-limit windows counted in PostgreSQL, so every instance sharing the database counts the same
 * window: a token's 301st append in a minute is refused whichever instance takes it. Upserts into
 * `rate_windows` (one statement for the requests that arrive together), an UNLOGGED table (no WAL,
 * not replicated, emptied by a crash: counters of at most a minute or an hour, which a crash may as
 * well forget). Unlimited budgets are not counted at all.
 */
export class PgRateLimiter implements Limiter {
  constructor(
    private readonly pool: SQL,
    private readonly clock: Clock,
  ) {}

  /** Counts asked for while the statement before them is out: the next statement's. */
  private waiting: Counting[] = [];
  private counting = false;

  async consume(key: string, limit: number, bucket: Bucket, windowMs = RATE_WINDOW_MS): Promise<RateDecision> {
    const window = Math.floor(this.clock.now() / windowMs);
    if (limit >= NO_RATE_LIMIT) return decide(1, limit, bucket, window, windowMs);
    const count = await new Promise<number>((resolve, reject) => {
      this.waiting.push({ key, start: window * windowMs, expires: (window + 1) * windowMs, resolve, reject });
      if (!this.counting) {
        this.counting = true;
        queueMicrotask(() => void this.countWaiting());
      }
    });
    return decide(count, limit, bucket, window, windowMs);
  }

  /**
   * One upsert at a time, for every count asked for since the last one went out: requests go on in
   * the order they came (one statement per request, on the pool's connections, came back in any
   * order, and a client's concurrent appends were stored out of the order it sent them), and a
   * burst costs one round trip. A key counted n times in one statement takes n consecutive counts,
   * in the order asked.
   */
  private async countWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0);
      // An upsert changes a row once per statement: each key and window once, with how many it counts.
      const groups = new Map<string, { key: string; start: number; expires: number; n: number; next: number }>();
      for (const c of batch) {
        const id = `${c.start}\u0000${c.key}`;
        const g = groups.get(id);
        if (g) g.n++;
        else groups.set(id, { key: c.key, start: c.start, expires: c.expires, n: 1, next: 0 });
      }
      try {
        const params: unknown[] = [];
        const values = [...groups.values()].map((g) => {
          params.push(g.key, g.start, g.expires, g.n);
          const i = params.length;
          return `($${i - 3}, $${i - 2}::bigint, $${i - 1}::bigint, $${i}::integer)`;
        });
        const rows = (await this.pool.unsafe(
          `INSERT INTO rate_windows (key, window_start, expires_at, count) VALUES ${values.join(", ")}
           ON CONFLICT (key, window_start) DO UPDATE SET count = rate_windows.count + excluded.count
           RETURNING key, window_start, count`,
          params,
        )) as { key: string; window_start: string | number; count: string | number }[];
        for (const r of rows) {
          const g = groups.get(`${Number(r.window_start)}\u0000${r.key}`)!;
          g.next = Number(r.count) - g.n + 1;
        }
        for (const c of batch) c.resolve(groups.get(`${c.start}\u0000${c.key}`)!.next++);
      } catch (e) {
        for (const c of batch) c.reject(e);
      }
    }
    this.counting = false;
  }

  refund(key: string, windowMs = RATE_WINDOW_MS): void {
    const start = Math.floor(this.clock.now() / windowMs) * windowMs;
    void this.pool.unsafe("UPDATE rate_windows SET count = count - 1 WHERE key = $1 AND window_start = $2 AND count > 0", [key, start]).catch(() => {});
  }

  /** Windows that have ended (a periodic task, once across the instances). */
  async forgetEnded(): Promise<number> {
    const r = await this.pool.unsafe("DELETE FROM rate_windows WHERE expires_at < $1", [this.clock.now()]);
    return r.count;
  }
}
