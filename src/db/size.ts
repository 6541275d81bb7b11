import { statSync } from "node:fs";
import { databasePath } from "./client";
import type { Store } from "./store";

/**
 * The database's size on disk, in bytes: SQLite's file and its write-ahead log under the data dir;
 * PostgreSQL's database (pg_database_size), whose write-ahead log is the server's, shared with
 * every database on it, so none is given (null).
 */
export async function databaseSizes(store: Store): Promise<{ database: number; wal: number | null }> {
  if (store.kind === "postgres") {
    const [row] = await store.pool.unsafe<{ bytes: string | number }[]>("SELECT pg_database_size(current_database()) AS bytes");
    return { database: Number(row!.bytes), wal: null };
  }
  const file = databasePath(store.dataDir);
  const size = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  return { database: size(file), wal: size(`${file}-wal`) };
}
