import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, rmSync, statfsSync, statSync, truncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StorageFull } from "../http/errors";

/** The file in the data dir that holds the reserve back (NOTESTREAM_DISK_RESERVE_MB). */
export const RESERVE_FILE = "notestream.reserve";
/** Room a write is let in with: below it the disk counts as full. */
export const ROOM_MARGIN_BYTES = 1024 * 1024;
/** A full disk is mended by an operator or by a user's purge, not in a second. */
export const STORAGE_RETRY_AFTER_SECONDS = 60;

const MB = 1024 * 1024;

/**
 * Whether a write failed because the disk is full: SQLite's SQLITE_FULL, the system's ENOSPC (an
 * fsync of the log), PostgreSQL's SQLSTATE 53100 disk_full. drizzle wraps a driver's error, so its
 * cause is asked too.
 */
export function isDiskFull(error: unknown): boolean {
  let e = error;
  for (let depth = 0; depth < 3 && e !== null && typeof e === "object"; depth++) {
    if (e instanceof StorageFull) return true;
    const { code, errno, cause } = e as { code?: unknown; errno?: unknown; cause?: unknown };
    if (code === "SQLITE_FULL" || code === "ENOSPC" || String(errno) === "53100") return true;
    e = cause;
  }
  return false;
}

export type StorageLog = (level: "info" | "error", msg: string, fields: Record<string, string | number | boolean | null>) => void;

/** What /up/deep and /metrics show. */
export interface StorageState {
  /** Whose disk: the data dir's (SQLite) or the PostgreSQL server's. */
  disk: "data_dir" | "postgres";
  /** Writes are refused with 507 (all but deletes and purges, on SQLite). */
  full: boolean;
  /** When the running spell began (ms), or null. */
  since: number | null;
  /** Spells since the process started. */
  spells: number;
  /** Bytes writes may still take (the disk's free space beyond the reserve, and SQLite's free pages); null on PostgreSQL, whose disk is not ours to see. */
  roomBytes: number | null;
  /** Bytes held back in the reserve file now. */
  reserveBytes: number;
}

/**
 * The service's answer to a full disk, in front of the writer (db/writer.ts asks it about every
 * write, at the cost of one property read while the disk has room and the reserve is held).
 *
 * On SQLite, the serving process holds a reserve: RESERVE_FILE in the data dir, of
 * NOTESTREAM_DISK_RESERVE_MB. When a write fails for a full disk, a spell begins: the reserve is
 * deleted at once, and from then on only writes that free room (deleting a note, purging it from
 * the trash, the trash and retention sweeps) run; every other write is refused with 507 before it
 * touches the database, so the reserve's room is left to those, whose transactions SQLite writes
 * to its log first. The spell ends once writes have room again: free disk space beyond the
 * reserve's size plus the pages SQLite has free inside its file (what a purge gives back; later
 * appends reuse them, no VACUUM needed), at least ROOM_MARGIN_BYTES. The reserve is written again
 * once the disk has room for it; until then every write checks that room first, so the reserve's
 * share of the disk stays free for deletes even while its file is missing.
 *
 * On PostgreSQL the disk is the database server's: no reserve and no look at it; a spell begins
 * with its disk_full and ends with the next write it takes.
 */
export class DiskSpace {
  /** While true the writer asks admit() before each write that does not free room. */
  checking = false;
  private since: number | null = null;
  private spells = 0;
  /** The reserve's size as configured (0 until the serving process holds one) and as on disk. */
  private target = 0;
  private held = 0;
  private readonly pages: { size: () => number; free: () => number; count: () => number; max: () => number } | null;

  constructor(
    private readonly sqlite: { dataDir: string; db: Database } | null,
    private readonly log: StorageLog,
  ) {
    this.pages = sqlite ? pragmas(sqlite.db) : null;
  }

  private get reservePath(): string {
    return join(this.sqlite!.dataDir, RESERVE_FILE);
  }

  /**
   * The serving process holds `bytes` back from now on (SQLite only): the file is made, or kept
   * from the last run, or resized. A disk already full at start begins a spell (and so gives the
   * file's room back, enough for the pid file and the deletes a user will send).
   */
  hold(bytes: number): void {
    if (!this.sqlite) return;
    this.target = bytes;
    const path = this.reservePath;
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    if (size > bytes) {
      if (bytes === 0) rmSync(path, { force: true });
      else truncateSync(path, bytes);
    }
    this.held = Math.min(size, bytes);
    const room = this.refresh();
    if (room !== null && room < ROOM_MARGIN_BYTES) this.begin("the disk was full at start", room);
  }

  /** A write that does not free room may run (null), or its refusal. Asked only while `checking`. */
  admit(): StorageFull | null {
    const room = this.refresh();
    if (room === null || room >= ROOM_MARGIN_BYTES) return null;
    this.begin("no room left for writes", room);
    return this.refusal();
  }

  /** The answer for a write that failed: storage_full when the disk filled (a spell begins), else null. */
  failed(error: unknown): StorageFull | null {
    if (!isDiskFull(error)) return null;
    if (error instanceof StorageFull) return error;
    this.begin("a write failed: the disk is full", null);
    return this.refusal();
  }

  /** A batch with writes that do not free room committed: on PostgreSQL, the spell is over. */
  committed(): void {
    if (this.since !== null && !this.sqlite) this.end(null);
  }

  /**
   * Looks at the disk again (SQLite): writes the reserve once there is room for it, ends a spell
   * once writes have room. Returns that room, or null where the disk is not ours to see.
   */
  refresh(): number | null {
    let room = this.room();
    if (room === null) return null;
    if (this.held < this.target && this.freeOnDisk() >= this.target - this.held + ROOM_MARGIN_BYTES) {
      this.writeReserve();
      room = this.room() ?? room;
    }
    if (this.since !== null && room >= ROOM_MARGIN_BYTES) this.end(room);
    this.checking = this.since !== null || this.held < this.target;
    return room;
  }

  state(): StorageState {
    const room = this.refresh();
    // Below 0 while writes took part of the reserve's share (then a full disk refuses them): shown as none.
    const roomBytes = room === null ? null : Math.max(0, room);
    return { disk: this.sqlite ? "data_dir" : "postgres", full: this.since !== null, since: this.since, spells: this.spells, roomBytes, reserveBytes: this.held };
  }

  private refusal(): StorageFull {
    const what = this.sqlite
      ? "the server's disk is full: this write could not be stored (deleting notes and purging them from the trash still work)"
      : "the database's disk is full: this write could not be stored";
    return new StorageFull(`${what}; try again later`, STORAGE_RETRY_AFTER_SECONDS);
  }

  private begin(reason: string, room: number | null): void {
    this.checking = true;
    if (this.since !== null) return;
    this.since = Date.now();
    this.spells++;
    const released = this.held;
    if (this.sqlite && released > 0) {
      rmSync(this.reservePath, { force: true });
      this.held = 0;
    }
    this.log("error", "storage full: writes refused with 507", {
      reason,
      database: this.sqlite ? "sqlite" : "postgres",
      reserve_released_bytes: released,
      room_bytes: room,
    });
  }

  private end(room: number | null): void {
    const seconds = Math.round((Date.now() - this.since!) / 1000);
    this.since = null;
    this.checking = this.held < this.target;
    this.log("info", "storage has room again: writes accepted", { full_seconds: seconds, room_bytes: room, reserve_bytes: this.held });
  }

  private freeOnDisk(): number {
    const { bavail, bsize } = statfsSync(this.sqlite!.dataDir);
    return bavail * bsize;
  }

  /**
   * The bytes writes may take: the disk's free space less what the reserve still lacks (kept for
   * deletes), plus SQLite's free pages; never more than SQLite's own page limit (max_page_count).
   */
  private room(): number | null {
    if (!this.sqlite || !this.pages) return null;
    try {
      const p = this.pages;
      const size = p.size();
      const free = p.free();
      const inFile = free * size;
      const onDisk = this.freeOnDisk() - (this.target - this.held);
      return Math.min(onDisk + inFile, (p.max() - p.count() + free) * size);
    } catch {
      // The database closed (shutdown) or the directory went away: nothing to refuse on.
      return null;
    }
  }

  /**
   * Random bytes, written rather than allocated: a file of zeros takes no room on a compressing
   * file system (ZFS, btrfs). A write the disk cannot take leaves what it wrote: a smaller reserve.
   */
  private writeReserve(): void {
    const fd = openSync(this.reservePath, "a");
    try {
      const chunk = randomBytes(Math.min(MB, this.target));
      while (this.held < this.target) this.held += writeSync(fd, chunk, 0, Math.min(chunk.length, this.target - this.held));
    } catch {
      this.held = statSync(this.reservePath, { throwIfNoEntry: false })?.size ?? 0;
    } finally {
      closeSync(fd);
    }
  }
}

function pragmas(db: Database) {
  const read = (name: string) => {
    const q = db.query(`PRAGMA ${name}`);
    return () => Number(Object.values(q.get() as Record<string, unknown>)[0]);
  };
  return { size: read("page_size"), free: read("freelist_count"), count: read("page_count"), max: read("max_page_count") };
}
