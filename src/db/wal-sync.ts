import { fdatasync, openSync } from "node:fs";

/**
 * Makes committed transactions durable without stopping the event loop: SQLite commits to its
 * write-ahead log without waiting for the disk (synchronous=NORMAL), and this fsyncs the log on
 * a worker thread before anyone is told their write is done. Commits that land while an fsync
 * runs share the next one, so the disk is asked as often as it can answer and no more.
 *
 * The guarantee is SQLite's synchronous=FULL in WAL mode (the log is on disk before the answer);
 * SQLite itself still syncs before and after every checkpoint.
 */
export class WalSync {
  private fd: number | null = null;
  private running = false;
  private queued: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private idleWaiters: (() => void)[] = [];
  /** fsyncs run; commits / syncs is how many commits each one covered. */
  syncs = 0;
  /** Told how long each fsync took (metrics), when set. */
  onSync: ((seconds: number) => void) | null = null;

  constructor(private readonly walPath: string) {}

  /** Resolves once an fsync that started after this call has finished. */
  sync(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.queued.push({ resolve, reject }));
    if (!this.running) this.start();
    return done;
  }

  /** Resolves when no fsync is running or waiting. */
  idle(): Promise<void> {
    if (!this.running && this.queued.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private start(): void {
    const group = this.queued;
    this.queued = [];
    this.running = true;
    const started = this.onSync ? performance.now() : 0;
    const finish = (err: unknown) => {
      this.running = false;
      this.syncs++;
      if (this.onSync && !err) this.onSync((performance.now() - started) / 1000);
      for (const w of group) (err ? w.reject(err) : w.resolve());
      if (this.queued.length > 0) this.start();
      else this.idleWaiters.splice(0).forEach((r) => r());
    };
    try {
      // The log exists once the first transaction committed; opened once, kept open.
      this.fd ??= openSync(this.walPath, "r");
      // fdatasync, as SQLite uses: the data and the size needed to read it back, not the timestamps.
      fdatasync(this.fd, finish);
    } catch (e) {
      finish(e);
    }
  }
}
