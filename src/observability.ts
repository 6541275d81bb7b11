import { count, inArray, min } from "drizzle-orm";
import { jobs } from "./db/tables";
import { databaseSizes } from "./db/size";
import type { Deps } from "./deps";
import type { AnswerObserver } from "./http/boundary";
import { routePatterns } from "./http/route-patterns";
import { followers } from "./modules/streams/follow";
import { jobHandlers } from "./queues";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * Wires GET /metrics to the running service when NOTESTREAM_METRICS_TOKEN is set: process
 * metrics, the writer's batches and fsyncs, the scrape-time readings (job queues, live follows,
 * database sizes), and the boundary's observer, returned here. Off, nothing is counted per request.
 */
export function observeService(deps: Deps, routes: () => readonly { method: string; path: string }[]): AnswerObserver | undefined {
  if (!deps.config.metricsToken) return undefined;
  const m = deps.metrics;
  m.enableDefaultMetrics();
  deps.writer.observe({ committed: (writes) => m.batchWrites.observe(writes), synced: (seconds) => m.fsyncSeconds.observe(seconds) });
  m.sources = { jobQueues: () => jobQueues(deps), sseOpen: () => followers(deps).size, files: () => databaseSizes(deps.store), storage: () => deps.disk.state() };
  // Built on first use from the finished app's routes; the fast routes (the append's) name their own.
  let patternOf: ((method: string, path: string) => string | null) | undefined;
  return (method, path, fastRoute, status, started) => {
    const known = METHODS.has(method) ? method : "OTHER";
    const route = fastRoute ?? (patternOf ??= routePatterns(routes()))(known, path) ?? "unmatched";
    m.requests.count(m.requests.slot(known, route), status);
    if (fastRoute !== null) m.appendSeconds.observe((performance.now() - started) / 1000);
  };
}

/**
 * Unfinished jobs of every queue (0 for an idle one): the jobs_due index (status first) finds
 * them, and there are few unless something is stuck, which is what this is for.
 */
async function jobQueues(deps: Deps): Promise<{ queue: string; depth: number; oldestAgeSeconds: number }[]> {
  const rows = await deps.db
    .select({ queue: jobs.queue, depth: count(), oldest: min(jobs.createdAt) })
    .from(jobs)
    .where(inArray(jobs.status, ["pending", "running"]))
    .groupBy(jobs.queue);
  const now = deps.clock.now();
  const byQueue = new Map(rows.map((r) => [r.queue, r]));
  const names = new Set([...Object.keys(jobHandlers), ...byQueue.keys()]);
  return [...names].sort().map((queue) => {
    const r = byQueue.get(queue);
    return { queue, depth: r?.depth ?? 0, oldestAgeSeconds: r?.oldest != null ? Math.max(0, (now - r.oldest) / 1000) : 0 };
  });
}

