import type { Database } from "bun:sqlite";
import { PendingAppends } from "./pending";
import type { WalSync } from "./wal-sync";

/** A client's error (a cap, a missing note): thrown before a write changes anything. */
function isExpected(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" && status < 500;
}

interface PendingWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  coalesce: boolean;
}

/**
 * The one place that writes. Every write is a synchronous function queued here; the writer
 * runs the writes that arrived while the previous batch committed in one transaction (one
 * fsync), each under its own savepoint, so a failing write (a cap, a validation) rolls back
 * alone and answers only its own request. A write's side effects (jobs) are enqueued inside
 * its function, so they commit with it or not at all.
 */
export class Writer {
  private queue: PendingWrite[] = [];
  /** Batches committed but waiting for their fsync. */
  private syncing = 0;
  private scheduled = false;
  private draining: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  readonly pending: PendingAppends;
  /**
   * Rows appends read, kept for the rest of a run of appends in one batch (the same stream is
   * looked up by every append to it). Cleared at each batch and around every other write; an
   * append's own changes to those rows go through `pending` or update the cached row.
   */
  readonly rows = new Map<string, unknown>();
  private rowsInvalidAfter = false;
  /** Committed batches and the writes in them: writes / batches is the group-commit factor. */
  readonly stats = { batches: 0, writes: 0 };
  // Prepared once: `Database.run(sql)` would compile each statement on every call.
  private readonly stmt;

  /** With a WalSync, a batch is answered only after its commit is on disk. */
  constructor(
    private readonly sqlite: Database,
    private readonly durable: WalSync | null = null,
  ) {
    this.pending = new PendingAppends(sqlite);
    const q = (sql: string) => sqlite.query(sql);
    this.stmt = {
      begin: q("BEGIN IMMEDIATE"),
      savepoint: q("SAVEPOINT write"),
      release: q("RELEASE write"),
      rollbackTo: q("ROLLBACK TO write"),
      commit: q("COMMIT"),
    };
  }

  /**
   * Queues a write. `coalesce` is for appends: they leave their lines and counters in `pending`,
   * written once per batch; any other write first sees those applied.
   */
  write<T>(run: () => T, opts: { coalesce?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject, coalesce: opts.coalesce === true });
      if (!this.scheduled) {
        this.scheduled = true;
        // While a batch waits for its fsync, the next one gathers: its writes would wait for the next
        // fsync anyway, and one commit of many writes costs less than several small ones.
        if (this.syncing > 0) this.flushAfterSync = true;
        // setImmediate, not a microtask: requests parsed in the same turn of the event loop join one batch.
        else setImmediate(() => this.flush());
      }
    });
  }

  private flushAfterSync = false;

  /**
   * Runs the writes of a batch inside one transaction. A write under a savepoint that fails is
   * rolled back alone. Coalesced writes (appends) skip the savepoint: by contract they fail with
   * an expected error (status < 500) only before they write anything. Any other failure of one
   * returns null, and the caller replays the batch with savepoints for all (`safe`).
   */
  private runBatch(batch: PendingWrite[], safe: boolean): { ok: boolean; value: unknown }[] | null {
    this.stmt.begin.run();
    this.rows.clear();
    const outcomes: { ok: boolean; value: unknown }[] = [];
    for (const w of batch) {
      if (!w.coalesce) {
        this.pending.apply();
        // Any other write may change the rows appends look up: they are read afresh after it.
        this.rows.clear();
        this.rowsInvalidAfter = true;
      } else if (this.rowsInvalidAfter) {
        this.rows.clear();
        this.rowsInvalidAfter = false;
      }
      this.pending.begin();
      if (w.coalesce && !safe) {
        try {
          outcomes.push({ ok: true, value: w.run() });
        } catch (error) {
          if (!isExpected(error)) return null;
          this.pending.rollback();
          outcomes.push({ ok: false, value: error });
        }
        continue;
      }
      this.stmt.savepoint.run();
      try {
        const value = w.run();
        this.stmt.release.run();
        outcomes.push({ ok: true, value });
      } catch (error) {
        this.stmt.rollbackTo.run();
        this.stmt.release.run();
        this.pending.rollback();
        outcomes.push({ ok: false, value: error });
      }
    }
    return outcomes;
  }

  /** Resolves once every queued write has committed (used at shutdown). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && !this.scheduled && this.syncing === 0) return Promise.resolve();
    this.draining ??= new Promise<void>((resolve) => (this.drained = resolve));
    return this.draining;
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
    let outcomes: { ok: boolean; value: unknown }[] | null;
    try {
      outcomes = this.runBatch(batch, false);
      if (outcomes === null) {
        // A coalesced write failed unexpectedly after it may have written: start the batch over,
        // every write under its own savepoint this time.
        this.sqlite.run("ROLLBACK");
        this.pending.discard();
        outcomes = this.runBatch(batch, true)!;
      }
    } catch (error) {
      try {
        this.sqlite.run("ROLLBACK");
      } catch {}
      this.pending.discard();
      for (const w of batch) w.reject(error);
      return this.afterFlush();
    }
    try {
      this.pending.apply();
      this.stmt.commit.run();
      this.stats.batches++;
      this.stats.writes += batch.length;
    } catch (error) {
      // Nothing of the batch is durable: every request in it learns so.
      this.pending.discard();
      try {
        this.sqlite.run("ROLLBACK");
      } catch {}
      for (const w of batch) w.reject(error);
      return this.afterFlush();
    }
    const results = outcomes;
    const answer = () => batch.forEach((w, i) => (results[i]!.ok ? w.resolve(results[i]!.value) : w.reject(results[i]!.value)));
    if (!this.durable) {
      answer();
      return this.afterFlush();
    }
    // The next batch may run while this one's fsync is on its way; its answers wait for their own.
    this.syncing++;
    this.durable.sync().then(answer, (error) => batch.forEach((w) => w.reject(error))).finally(() => {
      this.syncing--;
      if (this.flushAfterSync && this.syncing === 0) {
        this.flushAfterSync = false;
        setImmediate(() => this.flush());
      }
      this.afterFlush();
    });
  }

  private afterFlush(): void {
    if (this.queue.length === 0 && !this.scheduled && this.syncing === 0 && this.drained) {
      this.drained();
      this.drained = null;
      this.draining = null;
    }
  }
}
