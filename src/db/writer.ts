import type { Database } from "bun:sqlite";
import { NO_SINK, type BatchSink } from "./batch-sink";
import { BatchTransaction, type BatchWrite } from "./batch-transaction";
import type { DiskSpace } from "./disk-space";
import { sqliteTransactions, type Transactions } from "./transactions";
import type { WalSync } from "./wal-sync";

export type { BatchSink } from "./batch-sink";
export type { Transactions } from "./transactions";

interface PendingWrite extends BatchWrite {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Frees room (a delete, a purge): runs on a full disk too (disk-space.ts). */
  frees: boolean;
}

/** Told of each committed batch (metrics); the composition root sets it, so the writer imports none. */
export interface WriterObserver {
  /** A batch committed with this many writes in it. */
  committed(writes: number): void;
  /** One fdatasync of the log took this long (NOTESTREAM_SYNCHRONOUS=FULL). */
  synced(seconds: number): void;
}

/**
 * The one place that writes. Every write is a function queued here; the writer runs the writes
 * that arrived while the previous batch committed in one transaction (one commit, one fsync), in
 * order (how a batch runs its writes: batch-transaction.ts). A write's side effects (jobs) are
 * enqueued inside its function, so they commit with it or not at all.
 */
export class Writer {
  private queue: PendingWrite[] = [];
  /** A flush of the queue is on its way (the next turn of the event loop, or the end of an fsync). */
  private scheduled = false;
  /** A batch is running (between BEGIN and COMMIT): a flush asked for meanwhile waits for it. */
  private running = false;
  private flushWhenDone = false;
  /** Batches committed but waiting for their fsync. */
  private syncing = 0;
  /** The queue flushes once the running fsyncs end (writes that arrived while one was on its way). */
  private flushAfterSync = false;
  /** idle()'s promise and its resolver, while something waits for the writer to go quiet. */
  private draining: Promise<void> | null = null;
  private drained: (() => void) | null = null;
  private observer: WriterObserver | null = null;
  private readonly batch: BatchTransaction;
  /** Committed batches and the writes in them: writes / batches is the group-commit factor. */
  readonly stats = { batches: 0, writes: 0 };

  /**
   * `db`: the SQLite database (or the transaction statements of another, PostgreSQL's). With a
   * WalSync, a batch is answered only after its commit is on disk. `sink`: what coalesced writes
   * leave to be written once per batch (BatchSink). `storage`: refuses writes on a full disk.
   */
  constructor(
    db: Database | Transactions,
    private readonly durable: WalSync | null = null,
    sink: BatchSink = NO_SINK,
    private readonly storage: DiskSpace | null = null,
  ) {
    this.batch = new BatchTransaction("query" in db ? sqliteTransactions(db) : db, sink);
  }

  /**
   * Queues a write. `coalesce`: the write leaves its changes in the batch sink, written once per
   * batch, and runs without a savepoint (see BatchTransaction for its promise).
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
    this.batch.afterCommit(fn);
  }

  /**
   * Runs part of the running write under a savepoint of its own: if it throws, its rows and its
   * changes to the batch sink are undone and the error goes on to the caller, while the rest of the
   * write stands (a job's bookkeeping after its failed work).
   */
  nested<T>(run: () => T | Promise<T>): Promise<T> {
    return this.batch.nested(run);
  }

  /** Resolves once every queued write has committed (used at shutdown). */
  idle(): Promise<void> {
    if (this.quiet()) return Promise.resolve();
    this.draining ??= new Promise<void>((resolve) => (this.drained = resolve));
    return this.draining;
  }

  private quiet(): boolean {
    return this.queue.length === 0 && !this.scheduled && !this.running && this.syncing === 0;
  }

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
    let outcomes;
    try {
      outcomes = await this.batch.run(batch);
    } catch (error) {
      return this.fail(batch, error);
    }
    try {
      await this.batch.commit();
      this.stats.batches++;
      this.stats.writes += batch.length;
      this.observer?.committed(batch.length);
      if (this.storage?.checking && batch.some((w) => !w.frees)) this.storage.committed();
    } catch (error) {
      // Nothing of the batch is durable: every request in it learns so.
      await this.batch.abort();
      return this.fail(batch, error);
    }
    // Outside the try above: the batch is committed, whatever its readers make of that. After the
    // commit, before the fsync: what they tell is in the database; a crash could still lose it.
    this.batch.committed();
    const answer = () => batch.forEach((w, i) => (outcomes[i]!.ok ? w.resolve(outcomes[i]!.value) : w.reject(outcomes[i]!.value)));
    if (!this.durable) {
      answer();
      return this.afterFlush();
    }
    // The next batch may run while this one's fsync is on its way; its answers wait for their own.
    this.syncing++;
    void this.durable.sync().then(answer, (error) => this.fail(batch, error)).finally(() => {
      this.syncing--;
      if (this.flushAfterSync && this.syncing === 0) {
        this.flushAfterSync = false;
        setImmediate(() => this.flush());
      }
      this.afterFlush();
    });
  }

  /** Every write of a failed batch is told: storage_full when the disk is full (a spell begins), else the error itself. */
  private fail(batch: readonly PendingWrite[], error: unknown): void {
    for (const w of batch) w.reject(this.storage?.failed(error) ?? error);
    this.afterFlush();
  }

  private afterFlush(): void {
    if (this.drained && this.quiet()) {
      this.drained();
      this.drained = null;
      this.draining = null;
    }
  }
}
