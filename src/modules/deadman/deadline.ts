import { sql, type SQL } from "drizzle-orm";
import { notes } from "../../db/tables";

/**
 * When an armed stream turns late: its interval after the moment it was last heard of (a write,
 * the switch being set, the note restored from the trash). The rule in TypeScript and, for the
 * note's own interval, in drizzle's SQL; the append's overlays say it again in each database's
 * own SQL (streams/append/overlay-sqlite.ts, overlay-pg.ts). A stream on a cron schedule has its
 * deadline from schedule.ts instead.
 */
export function deadlineAfter(at: number, intervalSeconds: number): number {
  return at + intervalSeconds * 1000;
}

/** deadlineAfter(at, the note's expected_interval_seconds), in 64 bits: PostgreSQL would multiply the integer column (seconds) in 32. */
export function deadlineAfterSql(at: number): SQL {
  return sql`CAST(${at} AS BIGINT) + CAST(${notes.expectedIntervalSeconds} AS BIGINT) * 1000`;
}
