import type { Database } from "bun:sqlite";
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
 * What a feature holds in memory during one batch instead of writing it row by row (appends:
 * their lines and counters, and the rows they read). The writer tells it where each write starts
 * and ends, so it is undone, written or thrown away exactly as the transaction's rows are.
 */
export interface BatchOverlay {
  /** A write starts: what it changes from here on can be undone until the next begin(). */
  begin(): void;
  /** Where the running write has got to, for a rollback of only what follows. */
  mark(): number;
  /** Undoes what the running write changed since `mark` (since begin() without one), as ROLLBACK TO does its rows. */
  rollback(mark?: number): void;
  /** Writes what it holds to the rows, inside the transaction. */
  apply(): void;
  /** The batch that apply() wrote into has committed: readers can see its rows now. */
  committed(): void;
  /** The batch was rolled back: what it holds is gone with it. */
  discard(): void;
  /** The rows may have changed under it (a new batch, a write that is not coalesced): forget what it read. */
  invalidate(): void;
}

/** Told of each committed batch (metrics); the composition root sets it, so the writer imports none. */
export interface WriterObserver {
  /** A batch committed with this many writes in it. */
  committed(writes: number): void;
  /** One fdatasync of the log took this long (NOTESTREAM_SYNCHRONOUS=FULL). */
  synced(seconds: number): void;
}

const noOverlay: BatchOverlay = { begin() {}, mark: () => 0, rollback() {}, apply() {}, committed() {}, discard() {}, invalidate() {} };

/**
 * The one place that writes. Every write is a synchronous function queued here; the writer runs
 * the writes that arrived while the previous batch committed in one transaction (one commit, one
 * fsync), in order. A write's side effects (jobs) are enqueued inside its function, so they
 * commit with it or not at all.
 *
 * Each write runs under its own savepoint, so a failing write (a cap, a validation) rolls back
 * alone and answers only its own request. Coalesced writes (appends) skip that savepoint (three
 * statements each, on the hottest path). That is safe because they promise to throw an expected
 * error (status < 500) only before they write any row, so a refused one has nothing to undo but
 * its share of the overlay, which keeps its own journal. Should one break that promise (any other
 * error), the whole batch is rolled back and replayed with a savepoint for every write, so no
 * half-done write ever commits.
 *
 * Coalesced writes leave their changes in the overlay, applied once per batch before the commit;
 * any other write first sees it applied, and the overlay forgets the rows it read before and
 * after such a write, which may change them.
 */
export class Writer {
  private queue: PendingWrite[] = [];
  /** Batches committed but waiting for their fsync. */
  private syncing = 0;
  private scheduled = false;
  private draining: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  /** A write that is not coalesced ran: the overlay forgets its rows again before the next coalesced one. */
  private invalidateBeforeCoalesced = false;
  /** Committed batches and the writes in them: writes / batches is the group-commit factor. */
  readonly stats = { batches: 0, writes: 0 };
  // Prepared once: `Database.run(sql)` would compile each statement on every call.
  private readonly stmt;
  private observer: WriterObserver | null = null;
  /** What the running batch's writes asked to run once it commits (afterCommit), and whether a batch runs. */
  private readonly after: (() => void)[] = [];
  private inBatch = false;

  /** With a WalSync, a batch is answered only after its commit is on disk. */
  constructor(
    private readonly sqlite: Database,
    private readonly durable: WalSync | null = null,
    private readonly overlay: BatchOverlay = noOverlay,
  ) {
    const q = (sql: string) => sqlite.query(sql);
    this.stmt = {
      begin: q("BEGIN IMMEDIATE"),
      savepoint: q("SAVEPOINT write"),
      release: q("RELEASE write"),
      rollbackTo: q("ROLLBACK TO write"),
      nested: q("SAVEPOINT nested"),
      releaseNested: q("RELEASE nested"),
      rollbackToNested: q("ROLLBACK TO nested"),
      commit: q("COMMIT"),
    };
  }

  /**
   * Queues a write. `coalesce` is for appends: they leave their changes in the overlay, written
   * once per batch, and run without a savepoint (see the class comment for their promise).
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

  observe(observer: WriterObserver): void {
    this.observer = observer;
    if (this.durable) this.durable.onSync = (seconds) => observer.synced(seconds);
  }

  /**
   * Runs `fn` once the running write's batch has committed (a log line, a counter: what must not
   * tell of a write that was rolled back); dropped with the write if it rolls back. Outside a
   * write it runs at once.
   */
  afterCommit(fn: () => void): void {
    if (this.inBatch) this.after.push(fn);
    else fn();
  }

  /**
   * Runs the writes of a batch inside one transaction. A coalesced write that fails unexpectedly
   * returns null, and the caller replays the batch with savepoints for all (`safe`).
   */
  private runBatch(batch: PendingWrite[], safe: boolean): { ok: boolean; value: unknown }[] | null {
    this.stmt.begin.run();
    const overlay = this.overlay;
    overlay.invalidate();
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const after = this.after;
    after.length = 0;
    this.inBatch = true;
    for (const w of batch) {
      const mark = after.length;
      if (!w.coalesce) {
        overlay.apply();
        overlay.invalidate();
        this.invalidateBeforeCoalesced = true;
      } else if (this.invalidateBeforeCoalesced) {
        overlay.invalidate();
        this.invalidateBeforeCoalesced = false;
      }
      overlay.begin();
      if (w.coalesce && !safe) {
        try {
          outcomes.push({ ok: true, value: w.run() });
        } catch (error) {
          if (!isExpected(error)) return null;
          overlay.rollback();
          after.length = mark;
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
        overlay.rollback();
        after.length = mark;
        outcomes.push({ ok: false, value: error });
      }
    }
    return outcomes;
  }

  /**
   * Runs part of the running write under a savepoint of its own: if it throws, its rows and its
   * changes to the overlay are undone and the error goes on to the caller, while the rest of the
   * write stands (a job's bookkeeping after its failed work).
   */
  nested<T>(run: () => T): T {
    const mark = this.overlay.mark();
    const afterMark = this.after.length;
    this.stmt.nested.run();
    try {
      const value = run();
      this.stmt.releaseNested.run();
      return value;
    } catch (error) {
      this.stmt.rollbackToNested.run();
      this.stmt.releaseNested.run();
      this.overlay.rollback(mark);
      this.after.length = afterMark;
      throw error;
    }
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
        this.overlay.discard();
        outcomes = this.runBatch(batch, true)!;
      }
    } catch (error) {
      this.inBatch = false;
      try {
        this.sqlite.run("ROLLBACK");
      } catch {}
      this.overlay.discard();
      for (const w of batch) w.reject(error);
      return this.afterFlush();
    }
    this.inBatch = false;
    try {
      this.overlay.apply();
      this.stmt.commit.run();
      this.stats.batches++;
      this.stats.writes += batch.length;
      this.observer?.committed(batch.length);
    } catch (error) {
      // Nothing of the batch is durable: every request in it learns so.
      this.overlay.discard();
      this.after.length = 0;
      try {
        this.sqlite.run("ROLLBACK");
      } catch {}
      for (const w of batch) w.reject(error);
      return this.afterFlush();
    }
    // Outside the try above: the batch is committed, whatever its readers make of that.
    this.overlay.committed();
    // After the commit, before the fsync: what they tell is in the database; a crash could still lose it.
    if (this.after.length > 0) for (const fn of this.after.splice(0)) runAfterCommit(fn);
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

function runAfterCommit(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    console.error(JSON.stringify({ level: "error", msg: "an after-commit callback failed", error: String((e as Error)?.stack ?? e) }));
  }
}
