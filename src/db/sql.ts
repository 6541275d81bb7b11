import { is, type SQL } from "drizzle-orm";
import { PgDatabase } from "drizzle-orm/pg-core";
import type { SQLQueryBindings, Statement } from "bun:sqlite";
import type { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/** Which database `db` is: the few places that must differ ask this, and only under src/db or a store. */
export function isPostgres(db: Db): boolean {
  return is(db, PgDatabase);
}

/**
 * Raw SQL the query builder cannot say, run on whichever database this process uses. Write it in
 * the SQL that SQLite and PostgreSQL share (docs/SCALING.md lists what that leaves out); what
 * only one of them can say belongs to that database's store.
 */
export async function sqlRows<T>(db: Db, query: SQL): Promise<T[]> {
  if (isPostgres(db)) return [...((await (db as unknown as PgDatabase<never>).execute(query)) as unknown as T[])];
  return sqliteStatement(db, query, (s, params) => s.all(...params) as T[]);
}

/**
 * On SQLite, the statement through bun:sqlite's `query()`, which keeps it compiled by its text
 * (drizzle's `db.all(sql)` compiles it again on every call: a hot read, as a follower's, took 5x
 * as long). The template's values become its parameters as drizzle would bind them.
 */
function sqliteStatement<R>(db: Db, query: SQL, run: (s: Statement, params: SQLQueryBindings[]) => R): R {
  const { sql, params } = (db as unknown as { dialect: SQLiteSyncDialect }).dialect.sqlToQuery(query);
  return run(db.$client.query(sql), params as SQLQueryBindings[]);
}

/** Runs a statement; how many rows it changed. */
export async function sqlRun(db: Db, query: SQL): Promise<number> {
  if (isPostgres(db)) return ((await (db as unknown as PgDatabase<never>).execute(query)) as unknown as { count: number }).count;
  return sqliteStatement(db, query, (s, params) => s.run(...params).changes);
}
