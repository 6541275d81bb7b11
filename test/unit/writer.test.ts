import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { Writer } from "../../src/db/writer";

function setup() {
  const db = new Database(":memory:");
  db.run("CREATE TABLE t (v TEXT NOT NULL)");
  let commits = 0;
  const writer = new Writer(db);
  // Count COMMITs the writer issues by wrapping run.
  const run = db.run.bind(db);
  db.run = ((sql: string, ...rest: unknown[]) => {
    if (sql === "COMMIT") commits++;
    return (run as (...a: unknown[]) => unknown)(sql, ...rest);
  }) as typeof db.run;
  return { db, writer, commits: () => commits };
}

describe("Writer", () => {
  test("writes queued in the same turn share one transaction and each gets its own result", async () => {
    const { db, writer, commits } = setup();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => writer.write(() => (db.run("INSERT INTO t VALUES (?)", [`v${i}`]), i))),
    );
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(commits()).toBe(1);
    expect((db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(20);
  });

  test("a failing write rolls back alone and rejects only its own caller", async () => {
    const { db, writer } = setup();
    const outcomes = await Promise.allSettled([
      writer.write(() => db.run("INSERT INTO t VALUES ('a')")),
      writer.write(() => {
        db.run("INSERT INTO t VALUES ('half-done')");
        throw new Error("cap exceeded");
      }),
      writer.write(() => db.run("INSERT INTO t VALUES ('b')")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("cap exceeded");
    expect(db.query("SELECT v FROM t ORDER BY rowid").all()).toEqual([{ v: "a" }, { v: "b" }]);
  });

  test("writes queued later run in a later batch, in order", async () => {
    const { db, writer, commits } = setup();
    await writer.write(() => db.run("INSERT INTO t VALUES ('1')"));
    await writer.write(() => db.run("INSERT INTO t VALUES ('2')"));
    expect(commits()).toBe(2);
    expect(db.query("SELECT v FROM t ORDER BY rowid").all()).toEqual([{ v: "1" }, { v: "2" }]);
  });

  test("idle() resolves once everything queued has committed", async () => {
    const { db, writer } = setup();
    void writer.write(() => db.run("INSERT INTO t VALUES ('x')"));
    await writer.idle();
    expect((db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(1);
    await writer.idle(); // nothing queued: resolves at once
  });
});
