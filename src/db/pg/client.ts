import { SQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import type { PostgresConfig } from "../../config";
import * as schema from "./schema";

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };

/**
 * A pool of connections to the PostgreSQL of NOTESTREAM_DATABASE_URL (Bun's built-in client),
 * with drizzle over it. The sslmode goes to Bun as its `tls` mode, or, with an sslrootcert's CAs
 * or a client certificate (which go as `tls`), in the URL, where Bun reads it beside them. The
 * URL keeps the password, so neither it nor a driver error that could quote it is logged as is.
 */
export function pgClient(config: PostgresConfig, max = config.pool): SQL {
  if (config.ca === null && config.clientCert === null) return new SQL({ url: config.url, max, tls: config.sslmode });
  const url = new URL(config.url);
  url.searchParams.set("sslmode", config.sslmode);
  return new SQL({ url: url.toString(), max, tls: { ...(config.ca === null ? {} : { ca: config.ca }), ...config.clientCert } });
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
  const code = (e as { code?: unknown }).code;
  if (code === "ERR_POSTGRES_CONNECTION_REFUSED") {
    return "cannot connect (no server answers at that host and port, or the host name does not resolve)";
  }
  const tls = typeof code === "string" ? tlsProblem(code, config) : null;
  const password = decodeURIComponent(new URL(config.url).password);
  const oneLine = ((e as Error)?.message ?? String(e)).replace(/\s+/g, " ").trim();
  const said = password ? oneLine.split(password).join("***") : oneLine;
  if (tls) return `${tls} (${said})`;
  // The server's own words (pg_hba's `cert`), and what to set for it.
  if (config.clientCert === null && said.includes("requires a valid client certificate")) return `${said}: give one with sslcert=/path/client.pem&sslkey=/path/client.key`;
  return said;
}

/** Bun's codes for a server certificate that no CA trusted here signs. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
]);

/** What to change when TLS to the server failed: Bun's messages name the check, not the setting. */
function tlsProblem(code: string, config: PostgresConfig): string | null {
  if (code === "ERR_POSTGRES_TLS_NOT_AVAILABLE") {
    return `the server does not offer TLS, and sslmode=${config.sslmode} insists on it (sslmode=prefer connects without it)`;
  }
  if (UNTRUSTED.has(code)) {
    return config.ca === null
      ? "the server's TLS certificate is not signed by a publicly trusted CA: name the CA that signs it with sslrootcert=/path/to/ca.pem"
      : "the server's TLS certificate is not signed by a CA in the sslrootcert file";
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return `the server's TLS certificate does not name the host ${new URL(config.url).hostname}: connect by a name it holds, or check the CA only with sslmode=verify-ca`;
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") return "the server's TLS certificate is outside its validity dates";
  return null;
}
