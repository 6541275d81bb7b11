import { statSync } from "node:fs";
import type { Db } from "./client";
import { databasePath } from "./client";
import { isPostgres, sqlRows } from "./sql";

/**
 * The database's size on disk, in bytes: SQLite's file and its write-ahead log under the data dir;
 * PostgreSQL's database (pg_database_size), whose write-ahead log is the server's, shared with
 * every database on it, so none is given (null).
 */
export async function databaseSizes(db: Db, dataDir: string): Promise<{ database: number; wal: number | null }> {
  if (isPostgres(db)) {
    const [row] = await sqlRows<{ bytes: string | number }>(db, "SELECT pg_database_size(current_database()) AS bytes");
    return { database: Number(row!.bytes), wal: null };
  }
  const file = databasePath(dataDir);
  const size = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  return { database: size(file), wal: size(`${file}-wal`) };
}
