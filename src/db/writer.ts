import type { Database } from "bun:sqlite";
import { isDiskFull, type DiskSpace } from "./disk-space";
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
  /** Frees room (a delete, a purge): runs on a full disk too (disk-space.ts). */
  frees: boolean;
}

/**
 * A batch sink: what one feature holds in memory during a batch instead of writing it row by row,
 * written once before the commit. The writer tells it where each write starts and ends, so it is
 * undone, written or thrown away exactly as the transaction's rows are. Coalesced writes leave
 * their changes in it; any other write sees it applied first. The composition root hands the
 * writer its sink, so the writer knows no feature.
 */
export interface BatchSink {
  /** A write starts: what it changes from here on can be undone until the next begin(). */
  begin(): void;
  /** Where the running write has got to, for a rollback of only what follows. */
  mark(): number;
  /** Undoes what the running write changed since `mark` (since begin() without one), as ROLLBACK TO does its rows. */
  rollback(mark?: number): void;
  /** Writes what it holds to the rows, inside the transaction (a promise when that is a round trip). */
  apply(): void | Promise<void>;
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

/**
 * The transaction statements a writer issues, on its database's one writing connection. SQLite's
 * run synchronously (returning nothing), so a batch of synchronous writes never pauses;
 * PostgreSQL's are round trips (promises).
 */
export interface Transactions {
  begin(): void | Promise<void>;
  savepoint(name: "write" | "nested"): void | Promise<void>;
  release(name: "write" | "nested"): void | Promise<void>;
  /** Undoes what ran since the savepoint and releases it. */
  rollbackTo(name: "write" | "nested"): Promise<void>;
  commit(): void | Promise<void>;
  rollback(): Promise<void>;
  /** Runs a write so that its queries go to this transaction (PostgreSQL: the writer's connection, not the pool). */
  within<T>(run: () => T): T;
  /** The batch failed in a way that running it again can mend (PostgreSQL: a deadlock with another instance). */
  retryable(error: unknown): boolean;
}

/** SQLite's: the one connection is the writer's; statements prepared once (`run(sql)` compiles on every call). */
export function sqliteTransactions(sqlite: Database): Transactions {
  const q = (sql: string) => sqlite.query(sql);
  const begin = q("BEGIN IMMEDIATE");
  const commit = q("COMMIT");
  const sp = { write: q("SAVEPOINT write"), nested: q("SAVEPOINT nested") };
  const rel = { write: q("RELEASE write"), nested: q("RELEASE nested") };
  const back = { write: q("ROLLBACK TO write"), nested: q("ROLLBACK TO nested") };
  return {
    begin: () => void begin.run(),
    savepoint: (name) => void sp[name].run(),
    release: (name) => void rel[name].run(),
    rollbackTo: async (name) => {
      back[name].run();
      rel[name].run();
    },
    commit: () => void commit.run(),
    rollback: async () => void sqlite.run("ROLLBACK"),
    within: (run) => run(),
    retryable: () => false,
  };
}

/** runBatch's answer when the database aborted the batch in a way that running it again can mend. */
interface Retry {
  retry: unknown;
}

const noSink: BatchSink = { begin() {}, mark: () => 0, rollback() {}, apply() {}, committed() {}, discard() {}, invalidate() {} };

/**
 * The one place that writes. Every write is a synchronous function queued here; the writer runs
 * the writes that arrived while the previous batch committed in one transaction (one commit, one
 * fsync), in order. A write's side effects (jobs) are enqueued inside its function, so they
 * commit with it or not at all.
 *
 * Each write runs under its own savepoint, so a failing write (a cap, a validation) rolls back
 * alone and answers only its own request. Coalesced writes (the hot path's) skip that savepoint
 * (three statements each). That is safe because they promise to throw an expected error
 * (status < 500) only before they write any row, so a refused one has nothing to undo but its
 * share of the batch sink, which keeps its own journal. Should one break that promise (any other
 * error), the whole batch is rolled back and replayed with a savepoint for every write, so no
 * half-done write ever commits.
 *
 * Coalesced writes leave their changes in the batch sink, applied once per batch before the
 * commit; any other write first sees it applied, and the sink forgets the rows it read before and
 * after such a write, which may change them.
 */
export class Writer {
  private queue: PendingWrite[] = [];
  /** Batches committed but waiting for their fsync. */
  private syncing = 0;
  private scheduled = false;
  private draining: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  /** A write that is not coalesced ran: the sink forgets its rows again before the next coalesced one. */
  private invalidateBeforeCoalesced = false;
  /** Committed batches and the writes in them: writes / batches is the group-commit factor. */
  readonly stats = { batches: 0, writes: 0 };
  private observer: WriterObserver | null = null;
  /** What the running batch's writes asked to run once it commits (afterCommit), and whether a batch runs. */
  private readonly after: (() => void)[] = [];
  private inBatch = false;

  private readonly tx: Transactions;

  /**
   * `db`: the SQLite database (or the transaction statements of another, PostgreSQL's). With a
   * WalSync, a batch is answered only after its commit is on disk. `sink`: what coalesced writes
   * leave to be written once per batch (BatchSink).
   */
  constructor(
    db: Database | Transactions,
    private readonly durable: WalSync | null = null,
    private readonly sink: BatchSink = noSink,
    private readonly storage: DiskSpace | null = null,
  ) {
    this.tx = "query" in db ? sqliteTransactions(db) : db;
  }

  /**
   * Queues a write. `coalesce`: the write leaves its changes in the batch sink, written once per
   * batch, and runs without a savepoint (see the class comment for its promise).
   * `freesSpace` is for deletes and purges: on a full disk they still run, while other writes are
   * refused with storage_full before they touch the database (db/disk-space.ts).
   */
  write<T>(run: () => T | Promise<T>, opts: { coalesce?: boolean; freesSpace?: boolean } = {}): Promise<T> {
    const frees = opts.freesSpace === true;
    if (this.storage?.checking && !frees) {
      const refused = this.storage.admit();
      if (refused) return Promise.reject(refused);
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject, coalesce: opts.coalesce === true, frees });
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
   * returns null, and the caller replays the batch with savepoints for all (`safe`). A write may
   * be async (its queries awaited); it is awaited before the next one starts, so the writes of a
   * batch never interleave. A batch of synchronous writes runs without a pause.
   */
  private async runBatch(batch: PendingWrite[], safe: boolean): Promise<{ ok: boolean; value: unknown }[] | null | Retry> {
    await this.tx.begin();
    const sink = this.sink;
    sink.invalidate();
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const after = this.after;
    after.length = 0;
    this.inBatch = true;
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
      if (w.coalesce && !safe) {
        try {
          let value = this.tx.within(w.run);
          if (value instanceof Promise) value = await value;
          outcomes.push({ ok: true, value });
        } catch (error) {
          if (this.tx.retryable(error)) return { retry: error };
          // A full disk fails the whole batch: SQLite may have rolled its transaction back already.
          if (isDiskFull(error)) throw error;
          if (!isExpected(error)) return null;
          sink.rollback();
          after.length = mark;
          outcomes.push({ ok: false, value: error });
        }
        continue;
      }
      const sp = this.tx.savepoint("write");
      if (sp) await sp;
      try {
        let value = this.tx.within(w.run);
        if (value instanceof Promise) value = await value;
        const rel = this.tx.release("write");
        if (rel) await rel;
        outcomes.push({ ok: true, value });
      } catch (error) {
        // A deadlock with another instance: the whole batch lets go of its locks and runs again.
        if (this.tx.retryable(error)) return { retry: error };
        if (isDiskFull(error)) throw error;
        await this.tx.rollbackTo("write");
        sink.rollback();
        after.length = mark;
        outcomes.push({ ok: false, value: error });
      }
    }
    return outcomes;
  }

  /**
   * Runs part of the running write under a savepoint of its own: if it throws, its rows and its
   * changes to the batch sink are undone and the error goes on to the caller, while the rest of the
   * write stands (a job's bookkeeping after its failed work).
   */
  async nested<T>(run: () => T | Promise<T>): Promise<T> {
    const mark = this.sink.mark();
    const afterMark = this.after.length;
    await this.tx.savepoint("nested");
    try {
      const value = await run();
      await this.tx.release("nested");
      return value;
    } catch (error) {
      await this.tx.rollbackTo("nested");
      this.sink.rollback(mark);
      this.after.length = afterMark;
      throw error;
    }
  }

  /** Resolves once every queued write has committed (used at shutdown). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && !this.scheduled && !this.running && this.syncing === 0) return Promise.resolve();
    this.draining ??= new Promise<void>((resolve) => (this.drained = resolve));
    return this.draining;
  }

  /** A batch is running (between BEGIN and COMMIT): a flush asked for meanwhile waits for it. */
  private running = false;
  private flushWhenDone = false;

  private async flush(): Promise<void> {
    if (this.running) {
      this.flushWhenDone = true;
      return;
    }
    this.running = true;
    try {
      await this.flushBatch();
    } finally {
      this.running = false;
      if (this.flushWhenDone) {
        this.flushWhenDone = false;
        setImmediate(() => this.flush());
      }
      this.afterFlush();
    }
  }

  private async flushBatch(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
    let outcomes: { ok: boolean; value: unknown }[] | null | Retry = null;
    try {
      let safe = false;
      for (let attempt = 1; ; attempt++) {
        outcomes = await this.runBatch(batch, safe);
        if (outcomes !== null && !("retry" in outcomes)) break;
        await this.tx.rollback();
        this.sink.discard();
        if (outcomes === null) {
          // A coalesced write failed unexpectedly after it may have written: start the batch over,
          // every write under its own savepoint this time.
          safe = true;
          continue;
        }
        // PostgreSQL aborted this batch to end a deadlock with another instance's: after a pause
        // (a random one, so the two do not meet again), the batch runs again, a few times at most.
        if (attempt === 5) throw outcomes.retry;
        await Bun.sleep(Math.random() * 10 * 2 ** attempt);
      }
    } catch (error) {
      this.inBatch = false;
      try {
        await this.tx.rollback();
      } catch {}
      this.sink.discard();
      for (const w of batch) w.reject(this.failure(error));
      return this.afterFlush();
    }
    this.inBatch = false;
    try {
      // The sink's statement and COMMIT go out together (PostgreSQL: a round trip fewer): should the
      // statement fail, the server ends the transaction with ROLLBACK for that COMMIT, and the
      // statement's error fails the batch here.
      const applied = this.sink.apply();
      const c = this.tx.commit();
      if (applied || c) await Promise.all([applied, c]);
      this.stats.batches++;
      this.stats.writes += batch.length;
      this.observer?.committed(batch.length);
      if (this.storage?.checking && batch.some((w) => !w.frees)) this.storage.committed();
    } catch (error) {
      // Nothing of the batch is durable: every request in it learns so.
      this.sink.discard();
      this.after.length = 0;
      try {
        await this.tx.rollback();
      } catch {}
      for (const w of batch) w.reject(this.failure(error));
      return this.afterFlush();
    }
    // Outside the try above: the batch is committed, whatever its readers make of that.
    this.sink.committed();
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
    void this.durable.sync().then(answer, (error) => batch.forEach((w) => w.reject(this.failure(error)))).finally(() => {
      this.syncing--;
      if (this.flushAfterSync && this.syncing === 0) {
        this.flushAfterSync = false;
        setImmediate(() => this.flush());
      }
      this.afterFlush();
    });
  }

  /** What a failed batch's writes are told: storage_full when the disk is full (a spell begins), else the error itself. */
  private failure(error: unknown): unknown {
    return this.storage?.failed(error) ?? error;
  }

  private afterFlush(): void {
    if (this.queue.length === 0 && !this.scheduled && !this.running && this.syncing === 0 && this.drained) {
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
