import { getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * "column AS property, …" for a drizzle table, so hot-path queries written in SQL (and cached
 * as prepared statements by bun:sqlite's `query`) return rows shaped like drizzle's. Building a
 * drizzle query costs more than running it; this is for the few queries every append runs.
 */
export function selectList(table: SQLiteTable): string {
  return Object.entries(getTableColumns(table))
    .map(([key, col]) => `"${col.name}" AS "${key}"`)
    .join(", ");
}
