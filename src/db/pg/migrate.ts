import type { SQL } from "bun";
import pkg from "../../../package.json";
import { embeddedMigrations, SchemaTooNewError } from "../migrate";
import { pgDrizzle } from "./client";
import { migrationJournal, migrationSql } from "./migrations.generated";

/**
 * The session-level advisory lock every migrating notestream takes (the bytes of "notestre"):
 * instances started together queue on it, and each one after the first finds nothing to do.
 */
export const MIGRATION_LOCK = 0x6e6f746573747265n;

/** Where drizzle's PostgreSQL migrator keeps its bookkeeping (the same as `drizzle-kit migrate`). */
export const MIGRATIONS_TABLE = "drizzle.__drizzle_migrations";

export interface PgMigrateResult {
  /** Migrations this run applied. */
  applied: number;
  /** Migrations the database now has. */
  total: number;
  /** Another process held the lock when this one asked. */
  waited: boolean;
}

/**
 * Applies the drizzle-kit migrations embedded in the binary (migrations-pg/) to PostgreSQL,
 * like migrate() does for SQLite: drizzle's own migrator reading from memory, a database
 * migrated by a newer binary refused (SchemaTooNewError), app_meta recording who migrated.
 *
 * It runs on one connection reserved from `client`, under pg_advisory_lock on that connection:
 * the lock is the session's, so the check, the migrations and the bookkeeping must all run on
 * the session that holds it. The lock is released before the connection goes back to the pool;
 * a process that dies while migrating loses its connection and with it the lock, and its
 * migration's transaction rolls back.
 */
export async function migratePostgres(client: SQL, opts: { onWait?: () => void } = {}): Promise<PgMigrateResult> {
  const conn = await client.reserve();
  let locked = false;
  try {
    const [first] = await conn<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(${MIGRATION_LOCK}) AS ok`;
    const waited = !first!.ok;
    if (waited) {
      opts.onWait?.();
      await conn`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    }
    locked = true;
    const before = await appliedCount(conn);
    await refuseNewerSchema(conn);
    const db = pgDrizzle(conn);
    // drizzle's dialect.migrate is what drizzle-orm/bun-sql/migrator calls after reading files.
    await (db as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => Promise<void> }; session: unknown }).dialect.migrate(
      embeddedMigrations(migrationJournal, migrationSql),
      (db as unknown as { session: unknown }).session,
      {},
    );
    await conn`INSERT INTO app_meta (key, value) VALUES ('migrated_by', ${pkg.version}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    const total = await appliedCount(conn);
    await conn`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
    locked = false;
    return { applied: total - before, total, waited };
  } finally {
    // A connection whose unlock did not happen must not go back to the pool still holding it.
    if (locked) await conn.close();
    else await conn.release();
  }
}

async function hasTable(conn: SQL, name: string): Promise<boolean> {
  const [row] = await conn<{ t: string | null }[]>`SELECT to_regclass(${name})::text AS t`;
  return row!.t !== null;
}

async function appliedCount(conn: SQL): Promise<number> {
  if (!(await hasTable(conn, MIGRATIONS_TABLE))) return 0;
  const [row] = await conn.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`);
  return row!.n;
}

async function refuseNewerSchema(conn: SQL): Promise<void> {
  if (!(await hasTable(conn, MIGRATIONS_TABLE))) return;
  // created_at is a bigint, which Bun hands over as a string.
  const [applied] = await conn.unsafe<{ n: number; newest: string | null }[]>(`SELECT count(*)::int AS n, max(created_at)::text AS newest FROM ${MIGRATIONS_TABLE}`);
  const known = migrationJournal.entries;
  const newestKnown = known[known.length - 1]!.when;
  if (applied!.newest === null || Number(applied!.newest) <= newestKnown) return;
  const by = (await hasTable(conn, "app_meta")) ? (await conn<{ value: string }[]>`SELECT value FROM app_meta WHERE key = 'migrated_by'`)[0]?.value : undefined;
  throw new SchemaTooNewError(
    `this database was migrated by a newer notestream (${by ?? "unknown version"}, ${applied!.n} migrations); ` +
      `this is notestream ${pkg.version}, which knows ${known.length}. Run the newer binary, or restore a backup made before the upgrade.`,
  );
}
