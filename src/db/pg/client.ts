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
