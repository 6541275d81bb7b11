import { sqlRows, sqlRun } from "../../src/db/sql";
import type { Store } from "../../src/db/store";

/**
 * How many rows the app has changed so far, as SQLite's total_changes() counts them: every row an
 * INSERT, UPDATE or DELETE changed, the triggers' rows included (an upsert's update is one row).
 * The tests measure a write path's cost as the difference of two readings.
 *
 * PostgreSQL has no such counter (pg_stat's counts reach other sessions only when the writing
 * backend flushes them, up to seconds later), so a row trigger on every table of the app counts
 * each changed row into a sequence, at once and across connections; a sequence is not
 * transactional, so a row of a write rolled back still counts, as in SQLite. `rate_windows` is
 * left out: the rate limiter's counters, which SQLite's server keeps in memory, are no part of a
 * write path's cost.
 */
export async function rowChanges(db: Store): Promise<() => Promise<number>> {
  if (db.kind === "sqlite") {
    const sqlite = db.client;
    return async () => sqlite.query<{ c: number }, []>("SELECT total_changes() AS c").get()!.c;
  }
  await sqlRun(db, "CREATE SEQUENCE IF NOT EXISTS test_row_changes");
  await sqlRun(
    db,
    `CREATE OR REPLACE FUNCTION test_count_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN PERFORM nextval('test_row_changes'); RETURN NULL; END $$`,
  );
  const tables = await sqlRows<{ name: string }>(
    db,
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> 'rate_windows'
        AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'test_row_changes')`,
  );
  for (const { name } of tables) {
    await sqlRun(db, `CREATE TRIGGER test_row_changes AFTER INSERT OR UPDATE OR DELETE ON "${name}" FOR EACH ROW EXECUTE FUNCTION test_count_row_change()`);
  }
  return async () => {
    const [s] = await sqlRows<{ last_value: string | number; is_called: boolean }>(db, "SELECT last_value, is_called FROM test_row_changes");
    return s!.is_called ? Number(s!.last_value) : 0;
  };
}

/**
 * Sets the full-text index's triggers aside, for a test that counts a stream's own rows (what the
 * index writes for a chunk grows with the chunk's words: test/integration/search.test.ts has it).
 */
export async function dropSearchTriggers(db: Store): Promise<void> {
  if (db.kind === "sqlite") {
    const sqlite = db.client;
    for (const { name } of sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search_%'").all()) {
      sqlite.run(`DROP TRIGGER ${name}`);
    }
    return;
  }
  const triggers = await sqlRows<{ name: string; tbl: string }>(
    db,
    `SELECT t.tgname AS name, c.relname AS tbl FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
      WHERE n.nspname = current_schema() AND NOT t.tgisinternal AND (t.tgname LIKE '%search%' OR p.proname LIKE '%search%')`,
  );
  for (const { name, tbl } of triggers) await sqlRun(db, `DROP TRIGGER "${name}" ON "${tbl}"`);
}

/**
 * SQLite's FTS5 index merges its segments every few commits, and that work would land on
 * whichever write is next: merged first, so a count measures the write alone. PostgreSQL's index
 * has no such deferred work to move.
 */
export async function settleSearchIndex(db: Store): Promise<void> {
  if (db.kind === "postgres") return;
  for (const index of ["search_chunks", "search_notes"]) db.client.run(`INSERT INTO ${index} (${index}) VALUES ('optimize')`);
}
