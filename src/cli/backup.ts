import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, renameSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Config } from "../config";
import { databasePath } from "../db/client";
import { servingPid } from "../db/data-dir";
import { AppError } from "../http/errors";
import { UsageError } from "./args";
import type { Output } from "./commands";

/**
 * SQLite only: the database file itself (VACUUM INTO); PostgreSQL is backed up with its own tools.
 *
 * `notestream backup FILE`: a consistent copy of the database while the service runs and takes
 * writes. VACUUM INTO reads one snapshot (a WAL read transaction: writers are not blocked) and
 * writes a compact, self-contained database file; every write acknowledged before it began is in it.
 */
export async function backup(config: Config, argv: string[], io: Output): Promise<void> {
  const [file, ...rest] = argv;
  if (!file || rest.length > 0 || file.startsWith("-")) throw new UsageError("usage: notestream backup FILE");
  const target = resolve(file);
  if (existsSync(target)) throw new AppError("conflict", `${target} already exists; backups never overwrite a file`);
  const source = databasePath(config.dataDir);
  if (!existsSync(source)) throw new AppError("not_found", `no database at ${source}`);
  const db = new Database(source, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    const started = performance.now();
    db.run("VACUUM INTO ?", [target]);
    io.info(`backed up ${source} to ${target} (${statSync(target).size} bytes, ${Math.round(performance.now() - started)} ms)`);
    io.out(target);
  } finally {
    db.close();
  }
}

/**
 * SQLite only: checks the file with PRAGMA integrity_check and sqlite_master, then moves files.
 *
 * `notestream restore FILE`: puts a backup in place of the database. Refused while a server runs
 * on the data directory; the previous database is kept aside (renamed, never deleted).
 */
export async function restore(config: Config, argv: string[], io: Output): Promise<void> {
  const [file, ...rest] = argv;
  if (!file || rest.length > 0 || file.startsWith("-")) throw new UsageError("usage: notestream restore FILE");
  const source = resolve(file);
  if (!existsSync(source)) throw new AppError("not_found", `no file at ${source}`);
  const pid = servingPid(config.dataDir);
  if (pid !== null) throw new AppError("conflict", `a notestream server (pid ${pid}) is running on ${config.dataDir}; stop it before restoring`);
  const check = new Database(source, { readonly: true });
  try {
    const result = check.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check;
    if (result !== "ok") throw new AppError("bad_request", `${source} fails SQLite's integrity check: ${result}`);
    if (!check.query("SELECT 1 FROM sqlite_master WHERE name = '__drizzle_migrations'").get()) {
      throw new AppError("bad_request", `${source} is not a notestream database`);
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError("bad_request", `${source} is not a readable SQLite database: ${(e as Error).message}`);
  } finally {
    check.close();
  }
  const target = databasePath(config.dataDir);
  if (existsSync(target)) {
    const aside = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    // The WAL and shared memory files belong to the database they sit beside: they go with it.
    for (const suffix of ["", "-wal", "-shm"]) if (existsSync(target + suffix)) renameSync(target + suffix, aside + suffix);
    io.info(`the previous database is kept at ${aside}`);
  }
  copyFileSync(source, target);
  io.info(`restored ${source} into ${config.dataDir}; the next start migrates it forwards if it is older`);
  io.out(target);
}
