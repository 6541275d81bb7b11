import type { PostgresConfig } from "../config";
import { pgClient, PostgresUnavailableError, whyPostgresFailed } from "../db/pg/client";
import { SchemaTooNewError } from "../db/migrate";
import { migratePostgres } from "../db/pg/migrate";
import type { Output } from "./commands";

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
    throw new PostgresUnavailableError(`cannot migrate PostgreSQL database ${config.display}: ${whyPostgresFailed(e, config)}`);
  } finally {
    await client.close();
  }
}
