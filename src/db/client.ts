import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as schema from "./schema";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export interface OpenOptions {
  dataDir: string;
  synchronous: "FULL" | "NORMAL";
}

export function openDatabase({ dataDir, synchronous }: OpenOptions): Db {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new Database(join(dataDir, "notestream.db"), { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  // FULL: a commit is on disk before the request that caused it is answered.
  sqlite.run(`PRAGMA synchronous = ${synchronous}`);
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA foreign_keys = ON");
  sqlite.run("PRAGMA cache_size = -16000");
  sqlite.run("PRAGMA temp_store = MEMORY");
  return drizzle({ client: sqlite, schema }) as Db;
}
