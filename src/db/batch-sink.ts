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

/** A writer without a sink: every write goes to the rows itself. */
export const NO_SINK: BatchSink = { begin() {}, mark: () => 0, rollback() {}, apply() {}, committed() {}, discard() {}, invalidate() {} };
