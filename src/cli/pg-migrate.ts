import type { PostgresConfig } from "../config";
import { pgClient } from "../db/pg/client";
import { SchemaTooNewError } from "../db/migrate";
import { migratePostgres } from "../db/pg/migrate";
import type { Output } from "./commands";

/** A failure talking to PostgreSQL, in one line, naming the database without its password. */
export class PostgresMigrateError extends Error {
  // main.ts loads this module only for PostgreSQL, so it recognises the error by name.
  override name = "PostgresMigrateError";
}

/** `notestream migrate` against PostgreSQL: applies what the database lacks, under the advisory lock. */
export async function migratePostgresCommand(config: PostgresConfig, io: Output): Promise<void> {
  const client = pgClient(config, 1);
  try {
    const result = await migratePostgres(client, {
      onWait: () => io.info(`another notestream is migrating PostgreSQL database ${config.display}: waiting for it`),
    });
    const applied = result.applied === 0 ? "nothing to apply" : `applied ${result.applied} migration${result.applied === 1 ? "" : "s"}`;
    io.info(`PostgreSQL database ${config.display} is up to date: ${applied} (${result.total} in all)`);
  } catch (e) {
    if (e instanceof SchemaTooNewError) throw e;
    // Bun says only "Failed to connect" for a refused port and an unknown host name alike.
    const why =
      (e as { code?: unknown }).code === "ERR_POSTGRES_CONNECTION_REFUSED"
        ? "cannot connect (no server answers at that host and port, or the host name does not resolve)"
        : withoutPassword((e as Error).message ?? String(e), config.url);
    throw new PostgresMigrateError(`cannot migrate PostgreSQL database ${config.display}: ${why}`);
  } finally {
    await client.close();
  }
}

/** Driver messages name users and hosts, not passwords; this makes sure of it. */
function withoutPassword(message: string, url: string): string {
  const password = decodeURIComponent(new URL(url).password);
  const oneLine = message.replace(/\s+/g, " ").trim();
  return password ? oneLine.split(password).join("***") : oneLine;
}
