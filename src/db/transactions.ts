import type { Database } from "bun:sqlite";

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
