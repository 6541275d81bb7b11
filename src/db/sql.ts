import { getTableColumns, getTableName, is, type Column, type SQL, type Table } from "drizzle-orm";
import type { SQL as SQLClient } from "bun";
import { PgDatabase } from "drizzle-orm/pg-core";
import type { SQLQueryBindings } from "bun:sqlite";
import type { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

/** Which database `db` is: the few places that must differ ask this, and only under src/db or a store. */
export function isPostgres(db: Db): boolean {
  return is(db, PgDatabase);
}

/**
 * Raw SQL the query builder cannot say, run on whichever database this process uses: a `sql`
 * template, or for a hot path a string with `?` for each of `params` (its PostgreSQL form, with
 * $n, made once and kept). Write it in the SQL that SQLite and PostgreSQL share (docs/SCALING.md
 * lists what that leaves out). On SQLite the statement is kept compiled by bun:sqlite's `query()`
 * (drizzle's `db.all(sql)` compiles it on every call, which made a follower's read several times
 * slower).
 * PostgreSQL returns bigint columns as strings: read them with Number().
 */
export async function sqlRows<T>(db: Db, query: SQL | string, params: unknown[] = []): Promise<T[]> {
  if (isPostgres(db)) return [...((await pgRun(db, query, params)) as T[])];
  const [text, values] = sqliteForm(db, query, params);
  return db.$client.query(text).all(...values) as T[];
}

/** Runs a statement; how many rows it changed. */
export async function sqlRun(db: Db, query: SQL | string, params: unknown[] = []): Promise<number> {
  if (isPostgres(db)) return ((await pgRun(db, query, params)) as unknown as { count: number }).count;
  const [text, values] = sqliteForm(db, query, params);
  return db.$client.query(text).run(...values).changes;
}

function sqliteForm(db: Db, query: SQL | string, params: unknown[]): [string, SQLQueryBindings[]] {
  if (typeof query === "string") return [query, params as SQLQueryBindings[]];
  const q = (db as unknown as { dialect: SQLiteSyncDialect }).dialect.sqlToQuery(query);
  return [q.sql, q.params as SQLQueryBindings[]];
}

const pgTexts = new Map<string, string>();

/** `?` placeholders as PostgreSQL's $1, $2, … (the texts are the code's own, with no `?` in a literal). */
function pgText(text: string): string {
  let t = pgTexts.get(text);
  if (t === undefined) {
    let n = 0;
    pgTexts.set(text, (t = text.replace(/\?/g, () => `$${++n}`)));
  }
  return t;
}

/** On the connection of the running write (inside one) or the pool. */
function pgRun(db: Db, query: SQL | string, params: unknown[]): Promise<unknown> {
  if (typeof query !== "string") return (db as unknown as PgDatabase<never>).execute(query);
  return (db as unknown as { $client: SQLClient }).$client.unsafe(pgText(query), params);
}

interface TableQuery {
  sqlite: string;
  postgres: string;
  /** Columns whose driver values need the column's mapping (SQLite's 0/1 booleans and blobs, PostgreSQL's bigint strings). */
  mapped: [string, Column][];
}

const tableQueries = new Map<string, TableQuery>();
/** Column types whose values come back from the driver as drizzle gives them. */
const AS_IS = new Set(["SQLiteInteger", "SQLiteText", "SQLiteReal", "PgText", "PgBoolean", "PgInteger", "PgSerial"]);

/**
 * Rows of one table chosen by raw SQL (`rest`: WHERE …, ORDER BY …, LIMIT …, with `?` for each
 * of `params`), shaped and typed as drizzle's select gives them. For the reads on every append's
 * and request's path: the statement's text is built once per table and `rest` (PostgreSQL's with
 * $n placeholders), and on SQLite kept compiled by bun:sqlite; building it with drizzle on every
 * call was a large part of an append's time. `lock`: inside a write, hold the rows until it commits
 * (PostgreSQL's FOR NO KEY UPDATE; SQLite's writer holds the whole database already).
 */
export async function tableRows<T extends Table>(
  db: Db,
  table: T,
  rest: string,
  params: unknown[],
  opts: { lock?: boolean } = {},
): Promise<T["$inferSelect"][]> {
  const name = getTableName(table);
  const cacheKey = `${name}\u0000${rest}\u0000${opts.lock === true}`;
  let q = tableQueries.get(cacheKey);
  if (!q) {
    const columns = Object.entries(getTableColumns(table)) as [string, Column][];
    const select = `SELECT ${columns.map(([key, c]) => `"${c.name}" AS "${key}"`).join(", ")} FROM "${name}" ${rest}`;
    q = {
      sqlite: select,
      // NO KEY UPDATE, the strength of the UPDATE to come: rows inserted meanwhile that refer to
      // this one (a chunk, a job, a webhook attempt: KEY SHARE) do not wait for it, nor it for them.
      postgres: pgText(select) + (opts.lock ? " FOR NO KEY UPDATE" : ""),
      mapped: columns.filter(([, c]) => !AS_IS.has(c.columnType)),
    };
    tableQueries.set(cacheKey, q);
  }
  const rows = isPostgres(db)
    ? ((await (db as unknown as { $client: SQLClient }).$client.unsafe(q.postgres, params)) as Record<string, unknown>[])
    : (db.$client.query(q.sqlite).all(...(params as SQLQueryBindings[])) as Record<string, unknown>[]);
  if (q.mapped.length > 0) {
    for (const row of rows) {
      for (const [key, column] of q.mapped) {
        const value = row[key];
        if (value !== null && value !== undefined) row[key] = column.mapFromDriverValue(value);
      }
    }
  }
  return rows as T["$inferSelect"][];
}
