import { aliasedTable, and, eq, inArray, isNull, lt, lte, min, notExists, or, sql } from "drizzle-orm";
import type { Deps } from "../deps";
import { jobs } from "../db/tables";
import { sqlRows } from "../db/sql";
import { sharedDatabase } from "../db/store";

export type JobRow = typeof jobs.$inferSelect;

/** Retry delays after the 1st, 2nd, … failed attempt (scaled by NOTESTREAM_RETRY_SCALE). */
export const BACKOFF_MS = [10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000];

export function backoffMs(deps: Deps, attempt: number): number {
  return Math.round(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length) - 1]! * deps.config.retryScale);
}

export interface EnqueueOptions {
  /** Jobs of one key run one at a time, in the order they were enqueued. */
  serialKey?: string;
  maxAttempts?: number;
  runAt?: number;
}

/**
 * Adds a job inside the caller's write, so it commits with the change that caused it (or not
 * at all), and wakes the runner, whose claim queues behind this transaction's commit. Features
 * enqueue through their typed queue (define-queue.ts), which calls this.
 */
export async function enqueue(deps: Deps, queue: string, payload: unknown, opts: EnqueueOptions = {}): Promise<number> {
  const now = deps.clock.now();
  // A statement kept compiled (it runs in every append to a stream with a webhook).
  const [row] = await sqlRows<{ id: number | string }>(
    deps.store,
    "INSERT INTO jobs (queue, payload, serial_key, run_at, max_attempts, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    [queue, JSON.stringify(payload), opts.serialKey ?? null, opts.runAt ?? now, opts.maxAttempts ?? BACKOFF_MS.length + 1, now],
  );
  deps.jobs.wake();
  return Number(row!.id);
}

/** No earlier job of its serial key is unfinished (a condition on the `jobs` row in the outer query). */
function firstOfItsKey(deps: Deps) {
  const e = aliasedTable(jobs, "e");
  return or(
    isNull(jobs.serialKey),
    notExists(
      deps.db
        .select({ one: sql`1` })
        .from(e)
        .where(and(eq(e.serialKey, jobs.serialKey), lt(e.id, jobs.id), inArray(e.status, ["pending", "running"]))),
    ),
  );
}

/**
 * The ids of the first `limit` jobs due, oldest first: pending ones whose time has come, and
 * running ones whose lease expired. The status term repeats what `due` says, written as the
 * partial index jobs_unfinished's condition (SQLite matches it literally): once SQLite had
 * statistics (an ANALYZE), its planner walked the whole table in id order for this query, finished
 * jobs and all (kept a day, millions on a busy instance, and read inside the writer's
 * transaction); with the term and that index it reads only the unfinished jobs.
 */
export function dueJobs(deps: Deps, now: number, limit: number) {
  const due = or(and(eq(jobs.status, "pending"), lte(jobs.runAt, now)), and(eq(jobs.status, "running"), lte(jobs.leaseExpiresAt, now)));
  return deps.db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(sql`${jobs.status} IN ('pending', 'running')`, due, firstOfItsKey(deps)))
    .orderBy(jobs.id)
    .limit(limit);
}

/**
 * Claims up to `limit` due jobs by compare-and-swap on their lease: pending ones whose time has
 * come, and running ones whose lease expired (their runner died). A job waits while an earlier
 * job with the same serial key is unfinished, which keeps deliveries in append order per note.
 */
export async function claimDueJobs(deps: Deps, limit: number, leaseId: string): Promise<JobRow[]> {
  const now = deps.clock.now();
  if (sharedDatabase(deps.store)) {
    // Instances claim side by side: each locks the due jobs it picks and skips those another is
    // picking (FOR UPDATE SKIP LOCKED), in one statement. An earlier unfinished job of a serial key
    // still holds back its later ones, whichever instance runs it.
    const pick = sql`(${dueJobs(deps, now, limit).getSQL()} FOR UPDATE SKIP LOCKED)`;
    const rows = await deps.db
      .update(jobs)
      .set({ status: "running", leaseId, leaseExpiresAt: now + deps.config.jobLeaseMs, attempts: sql`${jobs.attempts} + 1` })
      .where(inArray(jobs.id, pick))
      .returning();
    return rows.sort((a, b) => a.id - b.id);
  }
  const candidates = await dueJobs(deps, now, limit);
  const claimed: JobRow[] = [];
  for (const c of candidates) {
    const [row] = await deps.db
      .update(jobs)
      .set({ status: "running", leaseId, leaseExpiresAt: now + deps.config.jobLeaseMs, attempts: sql`${jobs.attempts} + 1` })
      .where(and(eq(jobs.id, c.id), or(eq(jobs.status, "pending"), and(eq(jobs.status, "running"), lte(jobs.leaseExpiresAt, now)))))
      .returning();
    if (row) claimed.push(row);
  }
  return claimed;
}

/** Still this runner's to settle: running under its lease (the lease check stops two runners finishing the same job after a lease timed out). */
const leased = (job: JobRow, leaseId: string) => and(eq(jobs.id, job.id), eq(jobs.leaseId, leaseId), eq(jobs.status, "running"));

export async function completeJob(deps: Deps, job: JobRow, leaseId: string): Promise<boolean> {
  const changed = await deps.db
    .update(jobs)
    .set({ status: "done", finishedAt: deps.clock.now(), leaseId: null, lastError: null })
    .where(leased(job, leaseId))
    .returning({ id: jobs.id });
  return changed.length === 1;
}

/** Schedules another attempt, or fails the job for good when its attempts are spent. Returns the new status (and when the attempt is due). */
export async function retryJob(
  deps: Deps,
  job: JobRow,
  leaseId: string,
  error: string,
  delayMs?: number,
): Promise<{ status: "pending"; runAt: number } | { status: "failed" } | null> {
  if (job.attempts >= job.maxAttempts) return (await failJob(deps, job, leaseId, error)) ? { status: "failed" } : null;
  const runAt = deps.clock.now() + (delayMs ?? backoffMs(deps, job.attempts));
  const changed = await deps.db
    .update(jobs)
    .set({ status: "pending", runAt, leaseId: null, leaseExpiresAt: null, lastError: error.slice(0, 1000) })
    .where(leased(job, leaseId))
    .returning({ id: jobs.id });
  return changed.length === 1 ? { status: "pending", runAt } : null;
}

export async function failJob(deps: Deps, job: JobRow, leaseId: string, error: string): Promise<boolean> {
  const changed = await deps.db
    .update(jobs)
    .set({ status: "failed", finishedAt: deps.clock.now(), leaseId: null, lastError: error.slice(0, 1000) })
    .where(leased(job, leaseId))
    .returning({ id: jobs.id });
  return changed.length === 1;
}

/**
 * When the next claimable job falls due, so the runner can wake for it without waiting for a
 * sweep. A job waiting behind an earlier one of its serial key is not claimable yet. Where
 * instances share the database, a job another instance claimed is claimable again when its lease
 * ends (that instance may have died): the survivors wake then, not at the next sweep.
 */
export async function nextDueAt(deps: Deps): Promise<number | null> {
  const [r] = await deps.db
    .select({ t: min(jobs.runAt) })
    .from(jobs)
    .where(and(eq(jobs.status, "pending"), firstOfItsKey(deps)));
  const pending = r?.t ?? null;
  if (!sharedDatabase(deps.store)) return pending;
  const [l] = await deps.db.select({ t: min(jobs.leaseExpiresAt) }).from(jobs).where(eq(jobs.status, "running"));
  const leased = l?.t == null ? null : Number(l.t);
  return pending === null ? leased : leased === null ? pending : Math.min(pending, leased);
}

/**
 * At start-up: one server runs the jobs of a data dir, so anything still `running` belongs to a
 * process that died; it is due again at once instead of after its lease.
 */
export async function reclaimAbandoned(deps: Deps): Promise<number> {
  // Other instances may be running those jobs right now: theirs come back when their lease ends.
  if (sharedDatabase(deps.store)) return 0;
  const changed = await deps.db
    .update(jobs)
    .set({ status: "pending", leaseId: null, leaseExpiresAt: null })
    .where(eq(jobs.status, "running"))
    .returning({ id: jobs.id });
  return changed.length;
}

/** Finished jobs are kept a day for inspection, then dropped. */
export async function purgeFinishedJobs(deps: Deps): Promise<number> {
  const gone = await deps.db
    .delete(jobs)
    .where(and(inArray(jobs.status, ["done", "failed"]), lt(jobs.finishedAt, deps.clock.now() - 86_400_000)))
    .returning({ id: jobs.id });
  return gone.length;
}

/** Fails the unfinished jobs of a serial key (a webhook that was disabled or removed). */
export async function cancelSerial(deps: Deps, queue: string, serialKey: string, reason: string): Promise<number> {
  const changed = await deps.db
    .update(jobs)
    .set({ status: "failed", finishedAt: deps.clock.now(), lastError: reason })
    .where(and(eq(jobs.queue, queue), eq(jobs.serialKey, serialKey), eq(jobs.status, "pending")))
    .returning({ id: jobs.id });
  return changed.length;
}
