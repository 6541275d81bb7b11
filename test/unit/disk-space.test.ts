/**
 * DiskSpace on a real file system (a temp dir with room to spare) and the writer in front of it:
 * the reserve file's life (made, given up when the disk fills, made again when there is room),
 * the errors that mean a full disk, and which writes run during a spell.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskSpace, isDiskFull, RESERVE_FILE, type StorageLog } from "../../src/db/disk-space";
import type { WalSync } from "../../src/db/wal-sync";
import { Writer } from "../../src/db/writer";
import { StorageFull } from "../../src/http/errors";

const MB = 1024 * 1024;
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup() {
  const dataDir = mkdtempSync(join(tmpdir(), "notestream-disk-"));
  dirs.push(dataDir);
  const db = new Database(join(dataDir, "notestream.db"), { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("CREATE TABLE t (v TEXT NOT NULL)");
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const log: StorageLog = (level, msg, fields) => void lines.push({ level, msg, fields });
  const disk = new DiskSpace({ dataDir, db }, log);
  return { dataDir, db, disk, lines, reserve: join(dataDir, RESERVE_FILE) };
}

const sqliteFull = () => Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL", errno: 13 });

describe("isDiskFull", () => {
  test("SQLite's SQLITE_FULL, the system's ENOSPC and PostgreSQL's 53100, bare or wrapped as drizzle wraps a driver's error; nothing else", () => {
    expect(isDiskFull(sqliteFull())).toBe(true);
    expect(isDiskFull(Object.assign(new Error("no space"), { code: "ENOSPC" }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error("could not extend file"), { errno: "53100" }))).toBe(true);
    expect(isDiskFull(new Error("Failed query", { cause: Object.assign(new Error("disk full"), { errno: "53100" }) }))).toBe(true);
    expect(isDiskFull(new StorageFull("full", 60))).toBe(true);
    expect(isDiskFull(Object.assign(new Error("constraint"), { code: "SQLITE_CONSTRAINT" }))).toBe(false);
    expect(isDiskFull(Object.assign(new Error("deadlock"), { errno: "40P01" }))).toBe(false);
    expect(isDiskFull(null)).toBe(false);
  });
});

describe("the reserve", () => {
  test("is made at the size asked, given up when a write fails for a full disk, and made again once the disk has room, which ends the spell", () => {
    const { disk, lines, reserve } = setup();
    disk.hold(2 * MB);
    expect(statSync(reserve).size).toBe(2 * MB);
    expect(disk.checking).toBe(false);
    expect(disk.state()).toMatchObject({ full: false, spells: 0, reserveBytes: 2 * MB });

    const answer = disk.failed(sqliteFull());
    expect(answer).toBeInstanceOf(StorageFull);
    expect(answer!.status).toBe(507);
    expect(answer!.headers).toEqual({ "retry-after": "60" });
    expect(existsSync(reserve)).toBe(false);
    expect(disk.checking).toBe(true);
    expect(lines).toEqual([{ level: "error", msg: "storage full: writes refused with 507", fields: expect.objectContaining({ reserve_released_bytes: 2 * MB }) }]);
    // A second failure in the same spell logs nothing more.
    expect(disk.failed(sqliteFull())).toBeInstanceOf(StorageFull);
    expect(lines).toHaveLength(1);

    // This disk has room: the next look makes the reserve again and ends the spell.
    expect(disk.admit()).toBeNull();
    expect(statSync(reserve).size).toBe(2 * MB);
    expect(disk.checking).toBe(false);
    expect(disk.state()).toMatchObject({ full: false, spells: 1, reserveBytes: 2 * MB });
    expect(lines[1]).toMatchObject({ level: "info", msg: "storage has room again: writes accepted", fields: { reserve_bytes: 2 * MB } });
  });

  test("a reserve left by the last run is kept, shrunk to a smaller size asked, and removed when 0 is asked", () => {
    const { dataDir, db, reserve } = setup();
    writeFileSync(reserve, Buffer.alloc(3 * MB, 7));
    new DiskSpace({ dataDir, db }, () => {}).hold(3 * MB);
    expect(statSync(reserve).size).toBe(3 * MB);
    new DiskSpace({ dataDir, db }, () => {}).hold(1 * MB);
    expect(statSync(reserve).size).toBe(1 * MB);
    new DiskSpace({ dataDir, db }, () => {}).hold(0);
    expect(existsSync(reserve)).toBe(false);
  });

  test("holds random bytes, not zeros, which a compressing file system would store in no room", async () => {
    const { disk, reserve } = setup();
    disk.hold(1 * MB);
    const bytes = await Bun.file(reserve).bytes();
    expect(bytes.filter((x) => x === 0).length).toBeLessThan(bytes.length / 100);
  });
});

describe("the writer on a full disk", () => {
  test("a commit that fails for a full disk answers every write of its batch with storage_full, and nothing of it is stored", async () => {
    const { db, disk } = setup();
    const writer = new Writer(db, null, undefined, disk);
    const outcomes = await Promise.allSettled([
      writer.write(() => db.run("INSERT INTO t VALUES ('a')")),
      writer.write(() => {
        db.run("INSERT INTO t VALUES ('b')");
        throw sqliteFull();
      }),
    ]);
    expect(outcomes.map((o) => (o.status === "rejected" ? (o.reason as StorageFull).code : "ok"))).toEqual(["storage_full", "storage_full"]);
    expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
    // A spell began (this disk has room, so the next look ends it).
    expect(disk.state().spells).toBe(1);
  });

  test("an fsync of the log that fails with ENOSPC is answered storage_full, not as an acknowledgement", async () => {
    const { db, disk } = setup();
    const failing = { sync: () => Promise.reject(Object.assign(new Error("no space left on device"), { code: "ENOSPC" })) } as unknown as WalSync;
    const writer = new Writer(db, failing, undefined, disk);
    const outcome = await writer.write(() => db.run("INSERT INTO t VALUES ('a')")).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(StorageFull);
  });

  test("during a spell with no room, writes that free room run and others are refused before they reach the database", async () => {
    const { db, disk } = setup();
    const writer = new Writer(db, null, undefined, disk);
    await writer.write(() => db.run("INSERT INTO t VALUES ('kept')"));
    // No room at all: SQLite may grow by no page.
    const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    db.run(`PRAGMA max_page_count = ${pages}`);
    disk.failed(sqliteFull());
    let ran = false;
    const refused = await writer.write(() => void (ran = true)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StorageFull);
    expect(ran).toBe(false);
    await writer.write(() => db.run("DELETE FROM t"), { freesSpace: true });
    expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
    expect(disk.state().full).toBe(true);
  });
});
