import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WalSync } from "../../src/db/wal-sync";
import { Writer } from "../../src/db/writer";

function durableDb() {
  const path = join(mkdtempSync(join(tmpdir(), "ns-wal-")), "t.db");
  const db = new Database(path, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  db.run("CREATE TABLE t (v INTEGER)");
  const sync = new WalSync(`${path}-wal`);
  return { db, sync, writer: new Writer(db, sync) };
}

describe("WalSync", () => {
  test("a write is answered only after an fsync that began after its commit", async () => {
    const { db, sync, writer } = durableDb();
    let answered = false;
    const p = writer.write(() => db.run("INSERT INTO t VALUES (1)")).then(() => (answered = true));
    // Committed (visible) before the fsync is done, but not yet answered.
    await new Promise((r) => setImmediate(r));
    expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });
    expect(sync.syncs).toBe(0);
    await p;
    expect(answered).toBe(true);
    expect(sync.syncs).toBe(1);
  });

  test("commits that land while an fsync runs share the next one", async () => {
    const { db, sync, writer } = durableDb();
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 10; i++) writes.push(writer.write(() => db.run("INSERT INTO t VALUES (?)", [i])));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(writes);
    expect(writer.stats.batches).toBeGreaterThan(1);
    expect(sync.syncs).toBeLessThanOrEqual(writer.stats.batches);
    expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 200 });
    await writer.idle();
    await sync.idle();
  });

  test("an fsync that fails fails the writes it was to make durable", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (v INTEGER)");
    const writer = new Writer(db, new WalSync("/nonexistent/dir/x.db-wal"));
    await expect(writer.write(() => db.run("INSERT INTO t VALUES (1)"))).rejects.toThrow();
  });
});
