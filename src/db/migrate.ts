import { createHash } from "node:crypto";
import type { Db } from "./client";
import { migrationJournal, migrationSql } from "./migrations.generated";

/**
 * Applies the drizzle-kit migrations embedded in the binary, with drizzle's own migrator
 * (same bookkeeping table as `drizzle-kit migrate`), reading them from memory instead of disk.
 */
export function migrate(db: Db): void {
  const migrations = migrationJournal.entries.map((entry) => {
    const query = migrationSql[entry.tag];
    if (query === undefined) throw new Error(`migration ${entry.tag} is not embedded`);
    return {
      sql: query.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(query).digest("hex"),
    };
  });
  // drizzle's dialect.migrate is what drizzle-orm/bun-sqlite/migrator calls after reading files.
  (db as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => void }; session: unknown }).dialect.migrate(
    migrations,
    (db as unknown as { session: unknown }).session,
    {},
  );
}
