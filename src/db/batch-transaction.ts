import type { BatchSink } from "./batch-sink";
import { isDiskFull } from "./disk-space";
import type { Transactions } from "./transactions";

/** A queued write as its batch runs it. */
export interface BatchWrite {
  run: () => unknown;
  /** Leaves its changes in the batch sink and runs without a savepoint (see BatchTransaction). */
  coalesce: boolean;
}

/** What one write of a batch came to: its value, or what it threw, answered to its request alone. */
export interface Outcome {
  ok: boolean;
  value: unknown;
}

/** A coalesced write failed unexpectedly after it may have written: the batch runs again, every write under a savepoint. */
const UNSAFE = null;
/** The database aborted the batch in a way that running it again can mend. */
interface Retry {
  retry: unknown;
}

/** A client's error (a cap, a missing note): thrown before a write changes anything. */
function isExpected(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" && status < 500;
}

/**
 * The writes of one batch inside one transaction, on the writer's connection, in order.
 *
 * Each write runs under its own savepoint, so a failing write (a cap, a validation) rolls back
 * alone and answers only its own request. Coalesced writes (the hot path's) skip that savepoint
 * (three statements each). That is safe because they promise to throw an expected error
 * (status < 500) only before they write any row, so a refused one has nothing to undo but its
 * share of the batch sink, which keeps its own journal. Should one break that promise (any other
 * error), the whole batch is rolled back and run again with a savepoint for every write, so no
 * half-done write ever commits.
 *
 * Coalesced writes leave their changes in the batch sink, applied once per batch before the
 * commit; any other write first sees it applied, and the sink forgets the rows it read before and
 * after such a write, which may change them.
 */
export class BatchTransaction {
  /** What the running batch's writes asked to run once it commits (afterCommit). */
  private readonly after: (() => void)[] = [];
  /** Between a batch's BEGIN and its COMMIT or rollback. */
  private open = false;
  /** A write that is not coalesced ran: the sink forgets its rows again before the next coalesced one. */
  private invalidateBeforeCoalesced = false;
  /**
   * A nested part met a deadlock: the batch runs again whole even if its write caught the error
   * (the job runner turns it into a retry, which would repeat work done outside the database).
   */
  private nestedRetry: { error: unknown } | null = null;

  constructor(
    private readonly tx: Transactions,
    private readonly sink: BatchSink,
  ) {}

  /**
   * Runs the batch's writes, up to its COMMIT (commit()). Throws, with the batch rolled back, when
   * it fails as a whole (a full disk, a statement of the transaction's own).
   */
  async run(batch: readonly BatchWrite[]): Promise<Outcome[]> {
    try {
      let safe = false;
      for (let attempt = 1; ; attempt++) {
        this.nestedRetry = null;
        const outcomes = await this.runOnce(batch, safe);
        if (outcomes !== UNSAFE && !("retry" in outcomes)) return outcomes;
        await this.tx.rollback();
        this.sink.discard();
        if (outcomes === UNSAFE) {
          safe = true;
          continue;
        }
        // PostgreSQL aborted this batch to end a deadlock with another instance's: after a pause
        // (a random one, so the two do not meet again), the batch runs again, a few times at most.
        if (attempt === 5) throw outcomes.retry;
        await Bun.sleep(Math.random() * 10 * 2 ** attempt);
      }
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  /**
   * One pass over the batch. A write may be async (its queries awaited); it is awaited before the
   * next one starts, so the writes of a batch never interleave. A batch of synchronous writes runs
   * without a pause.
   */
  private async runOnce(batch: readonly BatchWrite[], safe: boolean): Promise<Outcome[] | typeof UNSAFE | Retry> {
    const { tx, sink, after } = this;
    await tx.begin();
    sink.invalidate();
    const outcomes: Outcome[] = [];
    after.length = 0;
    this.open = true;
    for (const w of batch) {
      const mark = after.length;
      if (!w.coalesce) {
        const applied = sink.apply();
        if (applied) await applied;
        sink.invalidate();
        this.invalidateBeforeCoalesced = true;
      } else if (this.invalidateBeforeCoalesced) {
        sink.invalidate();
        this.invalidateBeforeCoalesced = false;
      }
      sink.begin();
      const savepoint = !w.coalesce || safe;
      if (savepoint) {
        const sp = tx.savepoint("write");
        if (sp) await sp;
      }
      try {
        let value = tx.within(w.run);
        if (value instanceof Promise) value = await value;
        if (this.nestedRetry) return { retry: this.nestedRetry.error };
        if (savepoint) {
          const rel = tx.release("write");
          if (rel) await rel;
        }
        outcomes.push({ ok: true, value });
      } catch (error) {
        // A deadlock with another instance: the whole batch lets go of its locks and runs again.
        if (tx.retryable(error) || this.nestedRetry) return { retry: this.nestedRetry?.error ?? error };
        // A full disk fails the whole batch: SQLite may have rolled its transaction back already.
        if (isDiskFull(error)) throw error;
        if (savepoint) await tx.rollbackTo("write");
        else if (!isExpected(error)) return UNSAFE;
        sink.rollback();
        after.length = mark;
        outcomes.push({ ok: false, value: error });
      }
    }
    return outcomes;
  }

  /** Writes the sink's rows and commits; on failure the caller calls abort(). */
  async commit(): Promise<void> {
    this.open = false;
    // The sink's statement and COMMIT go out together (PostgreSQL: a round trip fewer): should the
    // statement fail, the server ends the transaction with ROLLBACK for that COMMIT, and the
    // statement's error fails the batch here.
    const applied = this.sink.apply();
    const c = this.tx.commit();
    if (applied || c) await Promise.all([applied, c]);
  }

  /** The batch committed: its sink's readers and its after-commit callbacks are told (before the fsync). */
  committed(): void {
    this.sink.committed();
    if (this.after.length > 0) for (const fn of this.after.splice(0)) runAfterCommit(fn);
  }

  /** Nothing of the batch stands: its rows, its sink's changes and its after-commit callbacks are dropped. */
  async abort(): Promise<void> {
    this.open = false;
    this.sink.discard();
    this.after.length = 0;
    try {
      await this.tx.rollback();
    } catch {}
  }

  /** Runs `fn` once the running write's batch has committed; outside a batch, at once. */
  afterCommit(fn: () => void): void {
    if (this.open) this.after.push(fn);
    else fn();
  }

  /** Runs part of the running write under a savepoint of its own (Writer.nested). */
  async nested<T>(run: () => T | Promise<T>): Promise<T> {
    const mark = this.sink.mark();
    const afterMark = this.after.length;
    await this.tx.savepoint("nested");
    try {
      const value = await run();
      await this.tx.release("nested");
      return value;
    } catch (error) {
      if (this.tx.retryable(error)) this.nestedRetry = { error };
      await this.tx.rollbackTo("nested");
      this.sink.rollback(mark);
      this.after.length = afterMark;
      throw error;
    }
  }
}

function runAfterCommit(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    console.error(JSON.stringify({ level: "error", msg: "an after-commit callback failed", error: String((e as Error)?.stack ?? e) }));
  }
}
