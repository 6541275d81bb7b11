import type { Deps } from "../deps";
import { jobs } from "../db/schema";

export type JobRow = typeof jobs.$inferSelect;

/** Retry delays after the 1st, 2nd, … failed attempt (scaled by NOTESTREAM_RETRY_SCALE). */
export const BACKOFF_MS = [10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000];
/** A claimed job not finished within this long is assumed lost and claimed again. */
export const LEASE_MS = 60_000;

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
export function enqueue(deps: Deps, queue: string, payload: unknown, opts: EnqueueOptions = {}): number {
  const now = deps.clock.now();
  const row = deps.db.$client
    .query<{ id: number }, [string, string, string | null, number, number, number]>(
      "INSERT INTO jobs (queue, payload, serial_key, run_at, max_attempts, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .get(queue, JSON.stringify(payload), opts.serialKey ?? null, opts.runAt ?? now, opts.maxAttempts ?? BACKOFF_MS.length + 1, now)!;
  deps.jobs.wake();
  return row.id;
}

/**
 * Claims up to `limit` due jobs by compare-and-swap on their lease: pending ones whose time has
 * come, and running ones whose lease expired (their runner died). A job waits while an earlier
 * job with the same serial key is unfinished, which keeps deliveries in append order per note.
 */
export function claimDueJobs(deps: Deps, limit: number, leaseId: string): JobRow[] {
  const now = deps.clock.now();
  const sqlite = deps.db.$client;
  const candidates = sqlite
    .query<{ id: number }, [number, number]>(
      `SELECT j.id FROM jobs j
       WHERE ((j.status = 'pending' AND j.run_at <= ?1) OR (j.status = 'running' AND j.lease_expires_at <= ?1))
         AND (j.serial_key IS NULL OR NOT EXISTS (
           SELECT 1 FROM jobs e WHERE e.serial_key = j.serial_key AND e.id < j.id AND e.status IN ('pending', 'running')))
       ORDER BY j.id LIMIT ?2`,
    )
    .all(now, limit);
  const claim = sqlite.query<JobRow & Record<string, unknown>, [string, number, number, number]>(
    `UPDATE jobs SET status = 'running', lease_id = ?1, lease_expires_at = ?2, attempts = attempts + 1
     WHERE id = ?3 AND (status = 'pending' OR (status = 'running' AND lease_expires_at <= ?4))
     RETURNING *`,
  );
  const claimed: JobRow[] = [];
  for (const c of candidates) {
    const row = claim.get(leaseId, now + LEASE_MS, c.id, now);
    if (row) claimed.push(fromSql(row));
  }
  return claimed;
}

function fromSql(r: Record<string, unknown>): JobRow {
  return {
    id: r.id as number,
    queue: r.queue as string,
    payload: r.payload as string,
    serialKey: r.serial_key as string | null,
    status: r.status as JobRow["status"],
    runAt: r.run_at as number,
    attempts: r.attempts as number,
    maxAttempts: r.max_attempts as number,
    leaseId: r.lease_id as string | null,
    leaseExpiresAt: r.lease_expires_at as number | null,
    lastError: r.last_error as string | null,
    createdAt: r.created_at as number,
    finishedAt: r.finished_at as number | null,
  };
}

// The lease check stops two runners finishing the same job after a lease timed out.
export function completeJob(deps: Deps, job: JobRow, leaseId: string): boolean {
  return (
    deps.db.$client.run(
      "UPDATE jobs SET status = 'done', finished_at = ?, lease_id = NULL, last_error = NULL WHERE id = ? AND lease_id = ? AND status = 'running'",
      [deps.clock.now(), job.id, leaseId],
    ).changes === 1
  );
}

/** Schedules another attempt, or fails the job for good when its attempts are spent. Returns the new status (and when the attempt is due). */
export function retryJob(
  deps: Deps,
  job: JobRow,
  leaseId: string,
  error: string,
  delayMs?: number,
): { status: "pending"; runAt: number } | { status: "failed" } | null {
  if (job.attempts >= job.maxAttempts) return failJob(deps, job, leaseId, error) ? { status: "failed" } : null;
  const runAt = deps.clock.now() + (delayMs ?? backoffMs(deps, job.attempts));
  const changed = deps.db.$client.run(
    "UPDATE jobs SET status = 'pending', run_at = ?, lease_id = NULL, lease_expires_at = NULL, last_error = ? WHERE id = ? AND lease_id = ? AND status = 'running'",
    [runAt, error.slice(0, 1000), job.id, leaseId],
  ).changes;
  return changed === 1 ? { status: "pending", runAt } : null;
}

export function failJob(deps: Deps, job: JobRow, leaseId: string, error: string): boolean {
  return (
    deps.db.$client.run(
      "UPDATE jobs SET status = 'failed', finished_at = ?, lease_id = NULL, last_error = ? WHERE id = ? AND lease_id = ? AND status = 'running'",
      [deps.clock.now(), error.slice(0, 1000), job.id, leaseId],
    ).changes === 1
  );
}

/**
 * When the next claimable job falls due, so the runner can wake for it without waiting for a
 * sweep. A job waiting behind an earlier one of its serial key is not claimable yet.
 */
export function nextDueAt(deps: Deps): number | null {
  const r = deps.db.$client
    .query<{ t: number | null }, []>(
      `SELECT min(j.run_at) AS t FROM jobs j WHERE j.status = 'pending'
         AND (j.serial_key IS NULL OR NOT EXISTS (
           SELECT 1 FROM jobs e WHERE e.serial_key = j.serial_key AND e.id < j.id AND e.status IN ('pending', 'running')))`,
    )
    .get();
  return r?.t ?? null;
}

/**
 * At start-up: one server runs the jobs of a data dir, so anything still `running` belongs to a
 * process that died; it is due again at once instead of after its lease.
 */
export function reclaimAbandoned(deps: Deps): number {
  return deps.db.$client.run("UPDATE jobs SET status = 'pending', lease_id = NULL, lease_expires_at = NULL WHERE status = 'running'").changes;
}

/** Finished jobs are kept a day for inspection, then dropped. */
export function purgeFinishedJobs(deps: Deps): number {
  return deps.db.$client.run("DELETE FROM jobs WHERE status IN ('done', 'failed') AND finished_at < ?", [deps.clock.now() - 86_400_000]).changes;
}

/** Fails the unfinished jobs of a serial key (a webhook that was disabled or removed). */
export function cancelSerial(deps: Deps, queue: string, serialKey: string, reason: string): number {
  return deps.db.$client.run(
    "UPDATE jobs SET status = 'failed', finished_at = ?, last_error = ? WHERE queue = ? AND serial_key = ? AND status = 'pending'",
    [deps.clock.now(), reason, queue, serialKey],
  ).changes;
}
