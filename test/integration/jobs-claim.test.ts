import { afterAll, beforeAll, expect, test } from "bun:test";
import { sqlRows, sqlRun } from "../../src/db/sql";
import { claimDueJobs, dueJobs } from "../../src/jobs/queue";
import { harness, onPostgres, type Harness } from "../helpers/harness";

/**
 * Finished jobs stay a day (millions on a busy instance); the claim, which runs inside the
 * writer's transaction, must read only the unfinished ones, also once the database has
 * statistics (after an ANALYZE, SQLite's planner walked the whole table in id order).
 */
let h: Harness;
beforeAll(async () => {
  h = await harness();
  await h.jobs.stop();
});
afterAll(() => h.close());

test("the claim reads only unfinished jobs, with a day of finished ones beside them and statistics gathered", async () => {
  const now = h.deps.clock.now();
  const series = (n: number) => (onPostgres ? `generate_series(1, ${n}) AS g(x)` : `(WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ${n}) SELECT x FROM s) AS g`);
  await h.deps.writer.write(async () => {
    await sqlRun(
      h.deps.store,
      `INSERT INTO jobs (queue, payload, serial_key, status, run_at, max_attempts, attempts, created_at, finished_at)
       SELECT 'webhook', '{}', 'note_' || (x % 50), 'done', ${now - 2000}, 9, 1, ${now - 2000}, ${now - 1000} FROM ${series(50_000)}`,
    );
    await sqlRun(
      h.deps.store,
      `INSERT INTO jobs (queue, payload, serial_key, status, run_at, max_attempts, created_at)
       SELECT 'webhook', '{}', 'note_' || (x % 50), 'pending', ${now - 100}, 9, ${now - 100} FROM ${series(300)}`,
    );
  });
  await sqlRun(h.deps.store, onPostgres ? "ANALYZE jobs" : "ANALYZE");
  const q = (dueJobs(h.deps, now, 8) as unknown as { toSQL(): { sql: string; params: unknown[] } }).toSQL();
  const plan = (await sqlRows<Record<string, string>>(h.deps.store, `${onPostgres ? "EXPLAIN" : "EXPLAIN QUERY PLAN"} ${q.sql.replace(/\$\d+/g, "?")}`, q.params))
    .map((r) => r["QUERY PLAN"] ?? r.detail)
    .join("\n");
  // SQLite: "SCAN jobs" is the whole table; PostgreSQL: a sequential scan, or the primary key walked in order.
  expect(plan).not.toMatch(/^SCAN jobs\b/m);
  expect(plan).not.toMatch(/Seq Scan on jobs|jobs_pkey/);
  // And the claim takes the oldest due job of each serial key, as before.
  const claimed = await h.deps.writer.write(() => claimDueJobs(h.deps, 8, "lease_test"));
  expect(claimed.map((j) => j.serialKey)).toEqual(Array.from({ length: 8 }, (_, i) => `note_${i + 1}`));
});
