// The PostgreSQL migrator against a real server (test/helpers/postgres.ts; skipped without one).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import pkg from "../../package.json";
import { loadConfig } from "../../src/config";
import { SchemaTooNewError } from "../../src/db/migrate";
import { pgClient } from "../../src/db/pg/client";
import { MIGRATION_LOCK, MIGRATIONS_TABLE, migratePostgres } from "../../src/db/pg/migrate";
import { migrationJournal } from "../../src/db/pg/migrations.generated";
import * as pgSchema from "../../src/db/pg/schema";
import { freshDatabase, hasPostgres, type TestDatabase } from "../helpers/postgres";

const KNOWN = migrationJournal.entries.length;
/** Full-text search's indexes, which drizzle's schema cannot express (migrations-pg/0002_search.sql). */
const SEARCH_INDEXES = ["note_chunks_search", "notes_search"];

const clientFor = (db: TestDatabase, pool = 2) => pgClient(loadConfig({ NOTESTREAM_DATABASE_URL: db.url }).postgres!, pool);

async function migrationRows(sql: SQL): Promise<number> {
  const [row] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`);
  return row!.n;
}

async function advisoryLocksHeld(sql: SQL): Promise<number> {
  // This database's only: other test processes on the same cluster hold locks of their own.
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
  return row!.n;
}

describe.skipIf(!hasPostgres)("PostgreSQL migrations", () => {
  const dbs: TestDatabase[] = [];
  const fresh = async () => {
    const db = await freshDatabase();
    dbs.push(db);
    return db;
  };
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  test("apply to an empty database, record who migrated, and are idempotent", async () => {
    const db = await fresh();
    const client = clientFor(db);
    try {
      expect(await migratePostgres(client)).toEqual({ applied: KNOWN, total: KNOWN, waited: false });
      expect(await migratePostgres(client)).toEqual({ applied: 0, total: KNOWN, waited: false });
      expect(await migrationRows(db.sql)).toBe(KNOWN);
      expect(await db.sql`SELECT value FROM app_meta WHERE key = 'migrated_by'`).toEqual([{ value: pkg.version }]);
      // The lock went with the run, and the reserved connection went back to the pool unlocked.
      expect(await advisoryLocksHeld(db.sql)).toBe(0);
    } finally {
      await client.close();
    }
  });

  /** rate_windows (migrations-pg/0003_rate_windows.sql), counted by src/http/rate-limit-pg.ts, is outside the drizzle schema. */
  const RATE_WINDOW_COLUMNS = ["rate_windows.key text not null", "rate_windows.window_start bigint not null", "rate_windows.expires_at bigint not null", "rate_windows.count integer not null"];
  /** The stored search vectors (migrations-pg/0005_search_vectors.sql, 0006), read only by search (src/modules/search/postgres.ts). */
  const SEARCH_VECTOR_COLUMNS = ["note_chunks.search_vector tsvector", "notes.search_vector tsvector"];

  // Catches a schema change in src/db/pg/schema whose `make migration-pg` was forgotten.
  test("leave the database with exactly the tables, columns and indexes of src/db/pg/schema", async () => {
    const db = await fresh();
    const client = clientFor(db);
    try {
      await migratePostgres(client);
    } finally {
      await client.close();
    }
    const tables = Object.values(pgSchema).filter((v) => is(v, PgTable)).map((t) => getTableConfig(t as PgTable));
    const columns = await db.sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string }[]>`
      SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`;
    const actualColumns = columns.map((c) => `${c.table_name}.${c.column_name} ${c.data_type}${c.is_nullable === "NO" ? " not null" : ""}`).sort();
    const expectedColumns = tables
      .flatMap((t) => t.columns.map((c) => `${t.name}.${c.name} ${c.getSQLType()}${c.notNull ? " not null" : ""}`))
      .concat(RATE_WINDOW_COLUMNS, SEARCH_VECTOR_COLUMNS)
      .sort();
    expect(actualColumns).toEqual(expectedColumns);

    const indexes = await db.sql<{ indexname: string; indexdef: string }[]>`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'`;
    const expectedIndexes = tables
      .flatMap((t) => [
        ...t.indexes.map((i) => i.config.name!),
        ...t.columns.filter((c) => c.isUnique).map((c) => c.uniqueName!),
        ...(t.primaryKeys.length ? t.primaryKeys.map((k) => k.getName()) : [`${t.name}_pkey`]),
      ])
      // Outside the drizzle schema: full-text search's GIN indexes over the stored vectors (migrations-pg/0002_search.sql, 0005_search_vectors.sql).
      .concat(SEARCH_INDEXES)
      // And the chunks the search indexer has yet to take (migrations-pg/0008_search_behind_commit.sql).
      .concat(["note_chunks_unindexed"])
      // Outside the drizzle schema too: the shared rate-limit windows, an UNLOGGED table (migrations-pg/0003_rate_windows.sql).
      .concat(["rate_windows_pkey", "rate_windows_expires"])
      .sort();
    expect(indexes.map((i) => i.indexname).sort()).toEqual(expectedIndexes);
    for (const name of SEARCH_INDEXES) expect(indexes.find((i) => i.indexname === name)!.indexdef).toEndWith(" USING gin (search_vector)");
    const generated = await db.sql<{ column: string; expression: string }[]>`
      SELECT table_name || '.' || column_name AS column, generation_expression AS expression FROM information_schema.columns
      WHERE table_schema = 'public' AND is_generated = 'ALWAYS'`;
    // A note's vector is generated; a chunk's comes from the search indexer after the append's commit (migrations-pg/0008).
    expect(generated.map((g) => g.column)).toEqual(["notes.search_vector"]);
    expect(generated[0]!.expression).toContain("to_tsvector('notestream_search'::regconfig, notestream_search_text(");
    const triggers = await db.sql<{ name: string; def: string }[]>`
      SELECT tgname AS name, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t WHERE NOT tgisinternal`;
    // And the counts kept on workspaces and folders (migrations-pg/0007).
    expect(triggers.map((t) => t.name).sort()).toEqual([
      "note_chunks_search_vector",
      "notes_folder_counts_delete",
      "notes_folder_counts_insert",
      "notes_folder_counts_update",
      "notes_workspace_counts",
      "notes_workspace_counts_update",
    ]);
    expect(triggers.find((t) => t.name === "note_chunks_search_vector")!.def).toContain("BEFORE UPDATE OF text ON public.note_chunks FOR EACH ROW");
    const [unlogged] = await db.sql<{ persistence: string }[]>`SELECT relpersistence AS persistence FROM pg_class WHERE relname = 'rate_windows'`;
    expect(unlogged!.persistence).toBe("u");
    const partial = indexes.filter((i) => i.indexdef.includes(" WHERE ")).map((i) => i.indexname).sort();
    expect(partial).toEqual(["jobs_unfinished", "note_chunks_unindexed", "notes_next_alert", "notes_retention_days", "notes_run_started", "notes_trashed"]);
  });

  test("two migrators started at once apply each migration exactly once: the second waits on the advisory lock", async () => {
    const db = await fresh();
    // A third session holds the lock first, so both migrators are provably queued on it.
    const holder = await db.sql.reserve();
    await holder`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    const a = clientFor(db);
    const b = clientFor(db);
    const waited: string[] = [];
    try {
      const runs = [migratePostgres(a, { onWait: () => waited.push("a") }), migratePostgres(b, { onWait: () => waited.push("b") })];
      const deadline = Date.now() + 5000;
      while (waited.length < 2 && Date.now() < deadline) await Bun.sleep(10);
      expect(waited.sort()).toEqual(["a", "b"]);
      // Neither has touched the database while it waits.
      expect(await db.sql`SELECT to_regclass(${MIGRATIONS_TABLE})::text AS t`).toEqual([{ t: null }]);
      await holder`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
      const results = await Promise.all(runs);
      expect(results.map((r) => r.applied).sort()).toEqual([0, KNOWN]);
      expect(results.map((r) => r.total)).toEqual([KNOWN, KNOWN]);
      expect(await migrationRows(db.sql)).toBe(KNOWN);
    } finally {
      await holder.release();
      await a.close();
      await b.close();
    }
  });

  test("two migrators racing without a holder still apply each migration once", async () => {
    const db = await fresh();
    const clients = [clientFor(db), clientFor(db), clientFor(db)];
    try {
      const results = await Promise.all(clients.map((c) => migratePostgres(c)));
      expect(results.reduce((n, r) => n + r.applied, 0)).toBe(KNOWN);
      expect(await migrationRows(db.sql)).toBe(KNOWN);
    } finally {
      for (const c of clients) await c.close();
    }
  });

  test("a database migrated by a newer binary is refused, naming both versions, and the lock is let go", async () => {
    const db = await fresh();
    const client = clientFor(db);
    try {
      await migratePostgres(client);
      // What a newer release leaves behind: one more migration, and its version.
      await db.sql.unsafe(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES ('future', $1)`, [Date.now() + 365 * 86_400_000]);
      await db.sql`UPDATE app_meta SET value = '9.9.9' WHERE key = 'migrated_by'`;
      const refused = await migratePostgres(client).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(SchemaTooNewError);
      expect((refused as Error).message).toContain("9.9.9");
      expect((refused as Error).message).toContain(`this is notestream ${pkg.version}, which knows ${KNOWN}`);
      // Nothing was recorded over the newer binary's name, and no session still holds the lock.
      expect(await db.sql`SELECT value FROM app_meta WHERE key = 'migrated_by'`).toEqual([{ value: "9.9.9" }]);
      expect(await advisoryLocksHeld(db.sql)).toBe(0);
    } finally {
      await client.close();
    }
  });
});
