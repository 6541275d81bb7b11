import { AsyncLocalStorage } from "node:async_hooks";
import type { ReservedSQL } from "bun";
import type { Transactions } from "../writer";
import { pgDrizzle, type PgDb } from "./client";

/** SQLSTATEs after which running the whole batch again can succeed: a deadlock, a serialization failure. */
const RETRYABLE = new Set(["40P01", "40001"]);

/**
 * The writer's transaction statements on PostgreSQL: one connection reserved from the pool for
 * the writer, and the batch's writes run "within" it, so that `deps.db` inside a write (see
 * `routedDb`) is that connection in its transaction, while reads outside writes use the pool.
 */
export function pgTransactions(conn: ReservedSQL, current: AsyncLocalStorage<PgDb>): Transactions {
  const txDb = pgDrizzle(conn);
  const run = async (statement: string) => void (await conn.unsafe(statement));
  return {
    // Not awaited: the batch's first statement follows BEGIN on the same connection, and a BEGIN
    // that failed fails it too; a round trip fewer per batch.
    begin: () => void conn.unsafe("BEGIN").catch(() => {}),
    savepoint: (name) => run(`SAVEPOINT ${name}`),
    release: (name) => run(`RELEASE SAVEPOINT ${name}`),
    rollbackTo: async (name) => {
      await run(`ROLLBACK TO SAVEPOINT ${name}`);
      await run(`RELEASE SAVEPOINT ${name}`);
    },
    // A transaction that a failed statement aborted answers COMMIT with ROLLBACK, not an error:
    // nothing of the batch is stored, and its writes must not be told otherwise.
    commit: async () => {
      const done = await conn.unsafe("COMMIT");
      if ((done as { command?: string }).command === "ROLLBACK") throw new Error("the batch's transaction was aborted: COMMIT rolled it back");
    },
    rollback: () => run("ROLLBACK"),
    within: (fn) => current.run(txDb, fn),
    // drizzle wraps the driver's error (its SQLSTATE is on `cause`); Bun's own carries it as errno.
    retryable: (error) => {
      const e = error as { errno?: unknown; cause?: { errno?: unknown } } | null;
      return RETRYABLE.has(String(e?.errno)) || RETRYABLE.has(String(e?.cause?.errno));
    },
  };
}

/**
 * The database the services see: inside a write, the writer's transaction; anywhere else, the
 * pool. Services stay written against one `deps.db`.
 */
export function routedDb(pool: PgDb, current: AsyncLocalStorage<PgDb>): PgDb {
  return new Proxy(pool, {
    get(target, prop) {
      const db = current.getStore() ?? target;
      const value = Reflect.get(db, prop, db);
      // Methods are bound to the database they came from; own properties ($client, a callable
      // SQL handle with methods of its own) are handed out as they are.
      return typeof value === "function" && !Object.hasOwn(db, prop) ? value.bind(db) : value;
    },
  });
}
