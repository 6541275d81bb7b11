import { bigint, customType } from "drizzle-orm/pg-core";

// How SQLite's storage classes map here. SQLite's `integer` is 64-bit; PostgreSQL's is 32, so
// every column whose value can pass 2^31 is a bigint read as a JS number (exact to 2^53):
// epoch-millisecond times (*_at), milliseconds (*_ms), byte counts, row ids, provider ids.
// Counts, attempts, HTTP statuses and durations in seconds stay `integer`. The parity test
// holds the names to it, so a new `…_at` column cannot become a 32-bit one by accident.

/** Epoch milliseconds, as everywhere in notestream (the clock's `now()`). */
export const ms = (name: string) => bigint(name, { mode: "number" });

/** A size in bytes: a workspace's storage passes 2 GiB on the larger plans. */
export const byteCount = (name: string) => bigint(name, { mode: "number" });

/** A rowid key of SQLite (jobs, attempts, chunks): an identity, which also takes an explicit id (a copy from SQLite). */
export const rowId = (name: string) => bigint(name, { mode: "number" }).primaryKey().generatedByDefaultAsIdentity();

/** SQLite's blob (Buffer mode): drizzle's pg-core has no bytea column of its own. */
export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});
