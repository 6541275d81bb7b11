import { getTableColumns, getTableName, type Column, type SQL, type Table } from "drizzle-orm";
import type { SQL as SQLClient } from "bun";
import { PgDialect } from "drizzle-orm/pg-core";
import type { SQLQueryBindings } from "bun:sqlite";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Store } from "./store";

const sqliteDialect = new SQLiteSyncDialect();
const pgDialect = new PgDialect();

/**
 * Raw SQL the query builder cannot say, run on this process's database (`store`; on PostgreSQL
 * inside a write on the writer's connection, in its transaction): a `sql` template, or for a hot
 * path a string with `?` for each of `params` (its PostgreSQL form, with $n, made once and kept).
 * Write it in the SQL that SQLite and PostgreSQL share (docs/SCALING.md lists what that leaves
 * out). On SQLite the statement is kept compiled by bun:sqlite's `query()` (drizzle's
 * `db.all(sql)` compiles it on every call, which made a follower's read several times slower).
 * PostgreSQL returns bigint columns as strings: read them with Number().
 */
export async function sqlRows<T>(store: Store, query: SQL | string, params: unknown[] = []): Promise<T[]> {
  if (store.kind === "postgres") return [...((await pgRun(store.connection(), query, params)) as T[])];
  const [text, values] = sqliteForm(query, params);
  return store.client.query(text).all(...values) as T[];
}

/** Runs a statement; how many rows it changed. */
export async function sqlRun(store: Store, query: SQL | string, params: unknown[] = []): Promise<number> {
  if (store.kind === "postgres") return ((await pgRun(store.connection(), query, params)) as { count: number }).count;
  const [text, values] = sqliteForm(query, params);
  return store.client.query(text).run(...values).changes;
}

function sqliteForm(query: SQL | string, params: unknown[]): [string, SQLQueryBindings[]] {
  if (typeof query === "string") return [query, params as SQLQueryBindings[]];
  const q = sqliteDialect.sqlToQuery(query);
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

function pgRun(conn: SQLClient, query: SQL | string, params: unknown[]): Promise<unknown> {
  if (typeof query === "string") return conn.unsafe(pgText(query), params);
  const q = pgDialect.sqlToQuery(query);
  return conn.unsafe(q.sql, q.params);
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
  store: Store,
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
  const rows = (
    store.kind === "postgres" ? await store.connection().unsafe(q.postgres, params) : store.client.query(q.sqlite).all(...(params as SQLQueryBindings[]))
  ) as Record<string, unknown>[];
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
