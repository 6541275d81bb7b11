import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { sqlRows } from "../../src/db/sql";
import { notes } from "../../src/db/tables";
import { sqliteTransactions } from "../../src/db/transactions";
import { Writer } from "../../src/db/writer";
import { overlayDb } from "../helpers/overlay-db";
import { enqueue } from "../../src/jobs/queue";
import { JobRunner } from "../../src/jobs/runner";
import { AppendBatch } from "../../src/modules/streams/append/batch";
import { appendTo } from "../../src/modules/streams/append/service";
import type { WorkspaceRow } from "../../src/modules/workspaces/repo";
import { harness } from "../helpers/harness";

function setup() {
  const db = new Database(":memory:");
  db.run("CREATE TABLE t (v TEXT NOT NULL)");
  const writer = new Writer(db);
  return { db, writer, commits: () => writer.stats.batches };
}

const counters = overlayDb;

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

describe("coalesced counters", () => {
  const row = (db: Database) => ({
    note: db.query("SELECT byte_size AS size FROM notes").get(),
    ws: db.query("SELECT storage_used AS used FROM workspaces").get(),
  });

  test("appends of one batch write their counters once, before the commit", async () => {
    const { db, batch, writer } = counters();
    const append = (n: number) =>
      writer.write(
        () => {
          const size = (batch.noteSize("n") ?? 0) + n;
          batch.setNote("n", size, 1, false);
          batch.addStorage("w", n);
          return size;
        },
        { coalesce: true },
      );
    expect(await Promise.all([append(1), append(2), append(3)])).toEqual([1, 3, 6]);
    expect(row(db)).toEqual({ note: { size: 6 }, ws: { used: 6 } });
  });

  test("an armed note's dead-man deadline moves with the write, even when the append thought it unarmed", async () => {
    const { db, batch, writer } = counters();
    db.run("INSERT INTO notes VALUES ('armed', 0, 0, 0, 60, 5, NULL)");
    const deadline = (id: string) => (db.query("SELECT deadman_due_at AS d FROM notes WHERE id = ?").get(id) as { d: number | null }).d;
    // Told the truth: the full update runs.
    await writer.write(() => batch.setNote("armed", 10, 1_000, true), { coalesce: true });
    expect(deadline("armed")).toBe(61_000);
    // A stale "unarmed" (the note was armed since it was read): the short form changes no row, the full one runs.
    await writer.write(() => batch.setNote("armed", 20, 2_000, false), { coalesce: true });
    expect(deadline("armed")).toBe(62_000);
    expect(db.query("SELECT byte_size AS s, last_write_at AS w FROM notes WHERE id = 'armed'").get()).toEqual({ s: 20, w: 2_000 });
    // An unarmed note keeps its null deadline.
    await writer.write(() => batch.setNote("n", 7, 3_000, false), { coalesce: true });
    expect(deadline("n")).toBeNull();
    expect(row(db).note).toEqual({ size: 7 });
  });

  test("a scheduled note's deadline is its schedule's next time after the batch's write, plus grace", async () => {
    const { db, batch, writer } = counters();
    db.run("INSERT INTO notes VALUES ('cron', 0, 0, 0, NULL, NULL, '0 3 * * *')");
    const schedule = { schedule: "0 3 * * *", timezone: "UTC", graceSeconds: 60 };
    await writer.write(
      () => {
        batch.setNote("cron", 10, Date.parse("2026-11-22T02:00:00Z"), false, schedule);
        batch.setNote("cron", 20, Date.parse("2026-11-22T04:00:00Z"), false, schedule);
      },
      { coalesce: true },
    );
    // The batch's last write counts: 03:00 the next day, not the same day.
    expect(db.query("SELECT deadman_due_at AS d, byte_size AS s FROM notes WHERE id = 'cron'").get()).toEqual({ d: Date.parse("2026-11-23T03:01:00Z"), s: 20 });
  });

  test("a failed append's counter changes are undone with its savepoint", async () => {
    const { db, batch, writer } = counters();
    const results = await Promise.allSettled([
      writer.write(() => batch.addStorage("w", 5), { coalesce: true }),
      writer.write(
        () => {
          batch.addStorage("w", 100);
          batch.setNote("n", 100, 1, false);
          throw new Error("cap");
        },
        { coalesce: true },
      ),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect(row(db)).toEqual({ note: { size: 0 }, ws: { used: 5 } });
  });

  test("a batch's lines to one stream become one chunk, in order, without a failed append's line", async () => {
    const { db, batch, writer } = counters();
    const chunks = () => db.query("SELECT note_id AS note, text FROM note_chunks ORDER BY seq").all();
    const line = (note: string, text: string, fail = false) =>
      writer.write(
        () => {
          batch.addText(note, text);
          if (fail) throw Object.assign(new Error("refused"), { status: 422 });
        },
        { coalesce: true },
      );
    const results = await Promise.allSettled([line("n", "a\n"), line("m", "x\n"), line("n", "b\n", true), line("n", "c\n")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(chunks()).toEqual([
      { note: "n", text: "a\nc\n" },
      { note: "m", text: "x\n" },
    ]);
    // A write that is not an append sees the lines before it, and the lines after it form a chunk of their own.
    const [, seen] = await Promise.all([
      line("n", "d\n"),
      writer.write(() => db.query("SELECT count(*) AS n FROM note_chunks").get()),
      line("n", "e\n"),
    ]);
    expect(seen).toEqual({ n: 3 });
    expect(chunks().slice(2)).toEqual([
      { note: "n", text: "d\n" },
      { note: "n", text: "e\n" },
    ]);
  });

  test("any other write sees the counters applied before it runs", async () => {
    const { db, batch, writer } = counters();
    const [, seen] = await Promise.all([
      writer.write(() => batch.addStorage("w", 7), { coalesce: true }),
      writer.write(() => db.query("SELECT storage_used AS used FROM workspaces").get()),
    ]);
    expect(seen).toEqual({ used: 7 });
  });
});

describe("appends without savepoints", () => {
  test("a coalesced write that fails unexpectedly after writing is undone alone: the batch is replayed safely", async () => {
    const { db, writer } = setup();
    let runs = 0;
    const outcomes = await Promise.allSettled([
      writer.write(() => db.run("INSERT INTO t VALUES ('first')"), { coalesce: true }),
      writer.write(
        () => {
          runs++;
          db.run("INSERT INTO t VALUES ('half-done')");
          throw new Error("disk I/O error");
        },
        { coalesce: true },
      ),
      writer.write(() => db.run("INSERT INTO t VALUES ('last')"), { coalesce: true }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(runs).toBe(2); // once fast, once under its savepoint
    expect(db.query("SELECT v FROM t ORDER BY rowid").all()).toEqual([{ v: "first" }, { v: "last" }]);
  });

  test("an expected failure (a client error, thrown before writing) needs no replay", async () => {
    const { db, writer } = setup();
    let runs = 0;
    const capExceeded = Object.assign(new Error("cap"), { status: 403 });
    const outcomes = await Promise.allSettled([
      writer.write(() => db.run("INSERT INTO t VALUES ('a')"), { coalesce: true }),
      writer.write(() => {
        runs++;
        throw capExceeded;
      }, { coalesce: true }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected"]);
    expect(runs).toBe(1);
    expect(db.query("SELECT v FROM t").all()).toEqual([{ v: "a" }]);
  });
});

describe("the overlay around other writes", () => {
  test("the rows appends read are kept for a run of appends, and forgotten at each batch and around any other write", async () => {
    const { batch, writer } = counters();
    const seen: boolean[] = [];
    const append = () =>
      writer.write(
        () => {
          seen.push(batch.rows.has("w"));
          batch.rows.set("w", { ws: {} as WorkspaceRow, streams: new Map() });
        },
        { coalesce: true },
      );
    await Promise.all([append(), append(), writer.write(() => seen.push(batch.rows.has("w"))), append(), append()]);
    await append();
    expect(seen).toEqual([false, true, false, false, true, false]);
  });

  test("a nested part that throws is undone, rows and overlay, and the rest of its write stands", async () => {
    const { db, batch, writer } = counters();
    const error = await writer.write(async () => {
      batch.addStorage("w", 1);
      let caught: unknown;
      try {
        await writer.nested(() => {
          batch.addStorage("w", 100);
          batch.addText("n", "lost\n");
          batch.setNote("n", 100, 1, false);
          db.run("UPDATE notes SET expected_interval_seconds = 60");
          throw new Error("half-done");
        });
      } catch (e) {
        caught = e;
      }
      batch.addStorage("w", 2);
      return (caught as Error).message;
    });
    expect(error).toBe("half-done");
    expect(db.query("SELECT byte_size AS size, expected_interval_seconds AS every FROM notes").get()).toEqual({ size: 0, every: null });
    expect(db.query("SELECT storage_used AS used FROM workspaces").get()).toEqual({ used: 3 });
    expect(db.query("SELECT count(*) AS n FROM note_chunks").get()).toEqual({ n: 0 });
  });

  test("a job whose in-write work throws after appending leaves neither the line nor its counters, and is retried", async () => {
    const h = await harness();
    await h.jobs.stop();
    const a = await h.account("dev");
    const token = await h.token(a, ["append"]);
    const first = await h.request("POST", "/api/v1/notes/by-filename/log.txt/append", { token, body: { text: "one" } });
    expect(first.status).toBe(201);
    const id: string = (await first.json()).id;
    const noteRow = async () => (await h.deps.db.select().from(notes).where(eq(notes.id, id)))[0]!;
    const before = await noteRow();
    const used = async () => Number((await sqlRows<{ used: number }>(h.deps.store, "SELECT storage_used AS used FROM workspaces WHERE id = ?", [a.workspaceId]))[0]!.used);
    const usedBefore = await used();
    const runner = new JobRunner(h.deps, {
      halfDone: {
        run: async () => async () => {
          await appendTo({ deps: h.deps, principal: { tokenId: "t", accountId: a.accountId, workspaceId: a.workspaceId, scopes: new Set(["append"]), noteId: id, kind: "api", rate: null, validUntil: Infinity } }, await noteRow(), "two\n");
          throw new Error("failed after the append");
        },
      },
    });
    await h.deps.writer.write(() => enqueue(h.deps, "halfDone", {}));
    await runner.start();
    await runner.drain();
    await runner.stop();
    const [job] = await sqlRows(h.deps.store, "SELECT status, attempts, last_error AS error FROM jobs WHERE queue = 'halfDone'");
    expect(job).toEqual({ status: "pending", attempts: 1, error: "failed after the append" });
    expect((await noteRow()).byteSize).toBe(before.byteSize);
    expect(await used()).toBe(usedBefore);
    expect(await sqlRows(h.deps.store, "SELECT text FROM note_chunks WHERE note_id = ?", [id])).toEqual([{ text: "one\n" }]);
    await h.close();
  });
});

describe("deadlocks with another instance", () => {
  test("a deadlock in a nested part runs the whole batch again, though the write caught the error (a job's send is not repeated)", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (v TEXT NOT NULL)");
    // SQLite never deadlocks: PostgreSQL's error (SQLSTATE 40P01) is thrown by hand, and told retryable as pgTransactions tells it.
    const writer = new Writer({ ...sqliteTransactions(db), retryable: (e) => (e as { errno?: unknown } | null)?.errno === "40P01" });
    let runs = 0;
    const outcome = await writer.write(async () => {
      runs++;
      db.run("INSERT INTO t VALUES (?)", [`write, run ${runs}`]);
      try {
        await writer.nested(() => {
          if (runs === 1) throw Object.assign(new Error("deadlock detected"), { errno: "40P01" });
          db.run("INSERT INTO t VALUES ('nested part')");
        });
        return "settled";
      } catch {
        // What the job runner does with its in-write work's error: the job is retried later.
        return "retried later";
      }
    });
    expect(outcome).toBe("settled");
    expect(runs).toBe(2);
    expect(db.query("SELECT v FROM t").all()).toEqual([{ v: "write, run 2" }, { v: "nested part" }]);
  });
});
