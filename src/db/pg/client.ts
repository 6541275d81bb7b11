import { SQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import type { PostgresConfig } from "../../config";
import * as schema from "./schema";

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };

/**
 * A pool of connections to the PostgreSQL of NOTESTREAM_DATABASE_URL (Bun's built-in client),
 * with drizzle over it. The sslmode goes to Bun as its `tls` mode; the URL keeps the password,
 * so neither it nor a driver error that could quote it is logged as is.
 */
export function pgClient(config: PostgresConfig, max = config.pool): SQL {
  return new SQL({ url: config.url, max, tls: config.sslmode });
}

export function pgDrizzle(client: SQL): PgDb {
  return drizzle({ client, schema }) as PgDb;
}

/** A failure talking to PostgreSQL, in one line, naming the database without its password. */
export class PostgresUnavailableError extends Error {
  override name = "PostgresUnavailableError";
}

/** Why a connection or statement failed, in one line without the password. */
export function whyPostgresFailed(e: unknown, config: PostgresConfig): string {
  // Bun says only "Failed to connect" for a refused port and an unknown host name alike.
  if ((e as { code?: unknown }).code === "ERR_POSTGRES_CONNECTION_REFUSED") {
    return "cannot connect (no server answers at that host and port, or the host name does not resolve)";
  }
  const password = decodeURIComponent(new URL(config.url).password);
  const oneLine = ((e as Error)?.message ?? String(e)).replace(/\s+/g, " ").trim();
  return password ? oneLine.split(password).join("***") : oneLine;
}
