import { createHash } from "node:crypto";
import pkg from "../../package.json";
import type { Db } from "./client";
import { migrationJournal, migrationSql } from "./migrations.generated";

/** The database is newer than this binary: running on it could misread or damage it. */
export class SchemaTooNewError extends Error {}

/**
 * Applies the drizzle-kit migrations embedded in the binary, with drizzle's own migrator
 * (same bookkeeping table as `drizzle-kit migrate`), reading them from memory instead of disk.
 * Migrations only go forwards: a database migrated by a newer binary is refused, naming both
 * versions, instead of being run on by code that does not know its schema.
 */
export function migrate(db: Db): void {
  refuseNewerSchema(db);
  const migrations = embeddedMigrations(migrationJournal, migrationSql);
  // drizzle's dialect.migrate is what drizzle-orm/bun-sqlite/migrator calls after reading files.
  (db as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => void }; session: unknown }).dialect.migrate(
    migrations,
    (db as unknown as { session: unknown }).session,
    {},
  );
  db.$client.run("INSERT INTO app_meta (key, value) VALUES ('migrated_by', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [pkg.version]);
}

/** The migrations embedded in the binary, as drizzle's migrators read them from disk (SQLite's and PostgreSQL's alike). */
export function embeddedMigrations(journal: { entries: readonly { tag: string; when: number; breakpoints: boolean }[] }, sqlByTag: Record<string, string>) {
  return journal.entries.map((entry) => {
    const query = sqlByTag[entry.tag];
    if (query === undefined) throw new Error(`migration ${entry.tag} is not embedded`);
    return {
      sql: query.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(query).digest("hex"),
    };
  });
}

function refuseNewerSchema(db: Db): void {
  const sqlite = db.$client;
  const hasTable = (name: string) => sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== null;
  if (!hasTable("__drizzle_migrations")) return;
  const applied = sqlite.query<{ n: number; newest: number | null }, []>("SELECT count(*) AS n, max(created_at) AS newest FROM __drizzle_migrations").get()!;
  const known = migrationJournal.entries;
  const newestKnown = known[known.length - 1]!.when;
  if (applied.newest === null || applied.newest <= newestKnown) return;
  const by = hasTable("app_meta") ? sqlite.query<{ value: string }, []>("SELECT value FROM app_meta WHERE key = 'migrated_by'").get()?.value : undefined;
  throw new SchemaTooNewError(
    `this database was migrated by a newer notestream (${by ?? "unknown version"}, ${applied.n} migrations); ` +
      `this is notestream ${pkg.version}, which knows ${known.length}. Run the newer binary, or restore a backup made before the upgrade.`,
  );
}
