import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as schema from "./schema";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export interface OpenOptions {
  dataDir: string;
  /** A database in memory only (notestream/testing): nothing on disk, gone when closed. */
  memory?: boolean;
}

export function databasePath(dataDir: string): string {
  return join(dataDir, "notestream.db");
}

export function openDatabase({ dataDir, memory = false }: OpenOptions): Db {
  if (!memory) mkdirSync(dataDir, { recursive: true });
  const sqlite = new Database(memory ? ":memory:" : databasePath(dataDir), { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  // Durability comes from WalSync (NOTESTREAM_SYNCHRONOUS=FULL): SQLite commits to the log without
  // waiting for the disk and the writer fsyncs the log off the event loop before answering.
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA foreign_keys = ON");
  // 4 MB of page cache: appends write new pages that are rarely read again, and a larger cache
  // only kept them in memory (more peak RSS under the append benchmark, no more throughput:
  // docs/PERFORMANCE.md); reads past it come from the OS's cache.
  sqlite.run("PRAGMA cache_size = -4000");
  sqlite.run("PRAGMA temp_store = MEMORY");
  return drizzle({ client: sqlite, schema }) as Db;
}
