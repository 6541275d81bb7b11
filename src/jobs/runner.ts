import type { Deps } from "../deps";
import { StorageFull } from "../http/errors";
import { randomBase62 } from "../lib/random";
import { claimDueJobs, completeJob, failJob, nextDueAt, reclaimAbandoned, retryJob, type JobRow } from "./queue";

export type JobOutcome =
  | { ok: true }
  /** Try again after the backoff (or after `delayMs`, e.g. a Retry-After). */
  | { retry: string; delayMs?: number }
  /** Give up now. */
  | { fail: string };

/** An outcome computed inside the write that settles the job (its own queries awaited there). */
export type InWriteOutcome = () => JobOutcome | Promise<JobOutcome>;

export interface JobHandler {
  /**
   * Does the job's outside work (network) and returns its outcome, or a function that computes
   * the outcome inside the write that settles the job, so a job's own database changes and its
   * bookkeeping commit together, in one transaction.
   */
  run: (deps: Deps, job: JobRow) => Promise<JobOutcome | InWriteOutcome>;
  /** Runs in the same write that marks the job failed for good (a dead letter, say). */
  onFailed?: (deps: Deps, job: JobRow, error: string) => void | Promise<void>;
  /** Told once the write that settled an attempt has committed (a log line, a counter). */
  settled?: (deps: Deps, job: JobRow, settled: Settled) => void | Promise<void>;
}

/** How an attempt ended: done, due again at `runAt`, or failed for good. */
export type Settled = { status: "done" } | { status: "retry"; error: string; runAt: number } | { status: "failed"; error: string };

export const JOBS_BEAT = "jobs";

/**
 * Runs due jobs with bounded concurrency. It wakes at once when a job is enqueued (and at the
 * time the next retry falls due), and a cron sweep wakes it too in case anything was missed.
 * A job's network work happens outside any transaction, so a slow receiver never holds up writes.
 */
export class JobRunner {
  private inflight = 0;
  /** Claims under way (and the timer armed after them): their jobs are about to be in flight, so stop() and drain() wait for them too. */
  private claiming = 0;
  private scheduled = false;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private idleWaiters: (() => void)[] = [];
  readonly leaseId = `run_${randomBase62(12)}`;

  constructor(
    private readonly deps: Deps,
    private readonly handlers: Record<string, JobHandler>,
    private readonly concurrency = deps.config.jobConcurrency,
  ) {}

  async start(): Promise<void> {
    this.deps.jobs = this;
    await this.deps.writer.write(() => reclaimAbandoned(this.deps));
    this.wake();
  }

  wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.tick();
    });
  }

  /** Stops claiming, and resolves when the jobs in flight have finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.idle()) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private idle(): boolean {
    return this.inflight === 0 && this.claiming === 0;
  }

  private notifyIdle(): void {
    if (this.idle()) this.idleWaiters.splice(0).forEach((r) => r());
  }

  /** Resolves when nothing is running and nothing is due (for tests and shutdown). */
  async drain(): Promise<void> {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      await this.deps.writer.idle();
      if (this.idle() && !this.scheduled) {
        const next = await nextDueAt(this.deps);
        if (next === null || next > this.deps.clock.now()) return;
        if ((await this.tick()) === 0 && this.idle()) return;
      }
      if (!this.idle()) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  /** Claims what is due and starts it; returns how many jobs it started. */
  private async tick(): Promise<number> {
    if (this.stopped) return 0;
    const free = this.concurrency - this.inflight;
    this.deps.heartbeats.set(JOBS_BEAT, this.deps.clock.now());
    if (free <= 0) return 0;
    let claimed: JobRow[] = [];
    this.claiming++;
    try {
      claimed = await this.deps.writer.write(() => claimDueJobs(this.deps, free, this.leaseId));
      for (const job of claimed) {
        this.inflight++;
        void this.run(job);
      }
      await this.armTimer();
    } catch (e) {
      // The claim's batch failed (PostgreSQL restarting, another write in it aborting the
      // transaction): nothing was claimed. Logged, not thrown: a tick is started with `void`, and
      // an unhandled rejection would end the process. The next wake or the cron sweep claims again.
      // Refused for a full disk: logged once when the spell began (db/disk-space.ts), not per tick.
      if (!(e instanceof StorageFull)) console.error(JSON.stringify({ level: "error", msg: "could not claim jobs", error: String(e) }));
    } finally {
      this.claiming--;
      this.notifyIdle();
    }
    return claimed.length;
  }

  private async run(job: JobRow): Promise<void> {
    const handler = this.handlers[job.queue];
    let result: JobOutcome | InWriteOutcome;
    try {
      result = handler ? await handler.run(this.deps, job) : { fail: `no handler for queue ${job.queue}` };
    } catch (e) {
      result = { retry: String((e as Error)?.message ?? e) };
    }
    let settled: Settled | null = null;
    try {
      settled = await this.deps.writer.write(async () => this.settle(job, await this.outcomeOf(result), handler));
    } catch (e) {
      console.error(JSON.stringify({ level: "error", msg: "could not settle a job", job: job.id, error: String(e) }));
    }
    if (settled && handler?.settled) {
      try {
        await handler.settled(this.deps, job, settled);
      } catch (e) {
        console.error(JSON.stringify({ level: "error", msg: "a job's settled hook failed", job: job.id, error: String(e) }));
      }
    }
    this.inflight--;
    this.notifyIdle();
    this.wake();
  }

  /**
   * Runs an in-write outcome nested in the write, so its failure is undone (its rows and what it
   * left in the writer's batch sink) while the job's bookkeeping stands.
   */
  private async outcomeOf(result: JobOutcome | InWriteOutcome): Promise<JobOutcome> {
    if (typeof result !== "function") return result;
    try {
      return await this.deps.writer.nested(result);
    } catch (e) {
      return { retry: String((e as Error)?.message ?? e) };
    }
  }

  /** Records the outcome; null when the job was not this runner's to settle any more (its lease expired). */
  private async settle(job: JobRow, outcome: JobOutcome, handler: JobHandler | undefined): Promise<Settled | null> {
    const d = this.deps;
    if ("ok" in outcome) return (await completeJob(d, job, this.leaseId)) ? { status: "done" } : null;
    const error = "fail" in outcome ? outcome.fail : outcome.retry;
    let next: Awaited<ReturnType<typeof retryJob>>;
    if ("fail" in outcome) next = (await failJob(d, job, this.leaseId, error)) ? { status: "failed" } : null;
    else next = await retryJob(d, job, this.leaseId, error, outcome.delayMs);
    if (next === null) return null;
    if (next.status === "pending") return { status: "retry", error, runAt: next.runAt };
    await handler?.onFailed?.(d, job, error);
    return { status: "failed", error };
  }

  /** Wakes for the next retry when it falls due; the cron sweep is only the safety net. */
  private async armTimer(): Promise<void> {
    if (this.stopped) return;
    const next = await nextDueAt(this.deps);
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const delay = Math.max(0, next - this.deps.clock.now());
    this.timer = setTimeout(() => this.wake(), Math.min(delay, 60_000));
    this.timer.unref?.();
  }
}
