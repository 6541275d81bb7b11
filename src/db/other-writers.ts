import type { Database } from "bun:sqlite";

/**
 * How this process hears that another one committed something its caches hold (tokens, plans)
 * or its followers wait for (lines): the command line beside a SQLite server, or another
 * instance on PostgreSQL.
 */
export interface OtherWriters {
  /** A number that moves when another process has committed since the last look. Cheap: read on every cache hit, at most every 50 ms. */
  version(): number;
  /** Inside a write that changes what other processes cache: they hear of it once it commits. */
  announce(): void;
  /** Calls `fn` as soon as another process's commit is heard of, where it can be (PostgreSQL's notifications); else version() is polled. */
  onChange?(fn: () => void): void;
}

/**
 * SQLite's: PRAGMA data_version moves when another connection (another process) commits, read on
 * this process's connection. Its own commits need no announcement: the other processes read
 * data_version too.
 */
export function sqliteOtherWriters(sqlite: Database): OtherWriters {
  const q = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
  return { version: () => q.get()!.data_version, announce: () => {} };
}
