import type { Metric, Registry } from "prom-client";

/**
 * Counts kept on the hot path (every request, every append, every commit) without allocating:
 * prom-client's `child.inc()` and `observe()` build a label key string and allocate on every
 * call, so these keep plain numbers and hand them to prom-client only
 * when /metrics is scraped.
 */

/** Requests by (method, route pattern, status): one Map entry per combination seen, all bounded sets. */
export class RequestTally {
  private readonly labels: { method: string; route: string }[] = [];
  /** method → route → slot: two lookups, no key string built per request. */
  private readonly slots = new Map<string, Map<string, number>>();
  /** slot * 1000 + status → count. */
  private readonly counts = new Map<number, number>();

  /** The slot of a method and route pattern; both from bounded sets (the app's routes), so this stops growing. */
  slot(method: string, route: string): number {
    let byRoute = this.slots.get(method);
    if (!byRoute) this.slots.set(method, (byRoute = new Map()));
    let slot = byRoute.get(route);
    if (slot === undefined) byRoute.set(route, (slot = this.labels.push({ method, route }) - 1));
    return slot;
  }

  count(slot: number, status: number): void {
    const key = slot * 1000 + status;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  *series(): Generator<{ method: string; route: string; status: string; value: number }> {
    for (const [key, value] of this.counts) {
      yield { ...this.labels[Math.floor(key / 1000)]!, status: String(key % 1000), value };
    }
  }
}

/**
 * A histogram with fixed buckets, observed without allocating, exposed as a prom-client metric:
 * the registry reads any object with a name, a help, a type and get(); this one answers as
 * prom-client's own Histogram does (cumulative `_bucket` series with `le`, `_sum`, `_count`).
 */
export class TalliedHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly counts: Float64Array;
  private sum = 0;
  private total = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    this.counts = new Float64Array(bounds.length);
    registry.registerMetric(this as unknown as Metric);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        break;
      }
    }
    this.sum += value;
    this.total++;
  }

  async get() {
    const bucket = `${this.name}_bucket`;
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += this.counts[i]!;
      values.push({ labels: { le }, value: acc, metricName: bucket });
    });
    values.push({ labels: { le: "+Inf" }, value: this.total, metricName: bucket });
    values.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.total, metricName: `${this.name}_count` });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
