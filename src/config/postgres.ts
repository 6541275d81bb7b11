import { readFileSync } from "node:fs";
import { ConfigError, parseWhole } from "./parse";

/** libpq's sslmode values, meaning what they mean there (docs/SCALING.md). */
export type PostgresSslMode = "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full";

export interface PostgresConfig {
  /** What Bun.SQL connects with, the TLS parameters taken out (src/db/pg/client.ts passes them). It holds the password: log `display`, never this. */
  url: string;
  /** user@host:port/database, without the password: for log lines and errors. */
  display: string;
  database: string;
  /** The mode connections use: the URL's sslmode, raised to verify-ca by an sslrootcert file (as libpq checks the chain then). */
  sslmode: PostgresSslMode;
  /** The PEM certificates of sslrootcert=<file>, read at start: the CAs the server's certificate is checked against; null for the built-in public CAs. */
  ca: string | null;
  /** sslcert and sslkey, read at start: the client certificate (PEM) and its private key, for a server that asks for one; both or neither. */
  clientCert: { cert: string; key: string } | null;
  /** Connections in the pool (NOTESTREAM_DATABASE_POOL). */
  pool: number;
}

const SSL_MODES: readonly PostgresSslMode[] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** A database URL with its password replaced, for messages: the password is never printed. */
export function maskPassword(url: string): string {
  // Up to the last @: a password with an unencoded @ in it is still hidden whole.
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):.*@/i, "$1:***@");
}

/** NOTESTREAM_DATABASE_URL (null: SQLite) with the pool size NOTESTREAM_DATABASE_POOL, checked in full at start. */
export function parsePostgres(raw: string | undefined, poolRaw: string): PostgresConfig | null {
  const pool = parseWhole("NOTESTREAM_DATABASE_POOL", poolRaw, 1, 1000);
  const text = raw?.trim();
  if (!text) return null;
  const shown = `"${maskPassword(text)}"`;
  const example = "postgres://user:password@host:5432/notestream?sslmode=require";
  // Not echoed: where it does not parse, the masking cannot be sure where the password ends.
  if (!URL.canParse(text)) throw new ConfigError(`NOTESTREAM_DATABASE_URL is not a URL like ${example} (percent-encode @ : / ? # in the password)`);
  const url = new URL(text);
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(`NOTESTREAM_DATABASE_URL must be a postgres:// or postgresql:// URL (unset it for SQLite), got ${shown}`);
  }
  if (!url.hostname) throw new ConfigError(`NOTESTREAM_DATABASE_URL names no host, got ${shown}; like ${example}`);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!database || database.includes("/")) throw new ConfigError(`NOTESTREAM_DATABASE_URL must name one database after the host, like ${example}, got ${shown}`);
  let sslmode: PostgresSslMode | null = null;
  let rootcert: string | null = null;
  const client: { sslcert?: string; sslkey?: string } = {};
  for (const [name, value] of url.searchParams) {
    if (name === "sslmode") {
      if (!SSL_MODES.includes(value as PostgresSslMode)) {
        throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got "${value}"`);
      }
      sslmode = value as PostgresSslMode;
    } else if (name === "sslrootcert") {
      rootcert = value;
    } else if (name === "sslcert" || name === "sslkey") {
      client[name] = value;
    } else {
      throw new ConfigError(`NOTESTREAM_DATABASE_URL: unknown parameter "${name}" (only sslmode, sslrootcert, sslcert and sslkey are read), got ${shown}`);
    }
  }
  const tls = sslRoot(sslmode, rootcert);
  const clientCert = sslClient(tls.sslmode, client);
  url.search = "";
  const user = decodeURIComponent(url.username);
  return {
    url: url.toString(),
    display: `${user ? `${user}@` : ""}${url.host}/${database}`,
    database,
    ...tls,
    clientCert,
    pool,
  };
}

/**
 * sslrootcert as libpq reads it: a PEM file of the CAs that sign the server's certificate (a
 * managed database's CA bundle), which makes prefer, allow and require check the chain as
 * verify-ca does (here they then insist on TLS: a CA named means an encrypted connection is
 * wanted); or `system`, the publicly trusted CAs, which asks for verify-full. The file is read
 * now, so a wrong path stops the start instead of every connection.
 */
function sslRoot(mode: PostgresSslMode | null, rootcert: string | null): { sslmode: PostgresSslMode; ca: string | null } {
  if (rootcert === null) return { sslmode: mode ?? "prefer", ca: null };
  if (rootcert === "system") {
    if (mode !== null && mode !== "verify-full") {
      throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslrootcert=system checks the host name too, so it needs sslmode=verify-full (or no sslmode), got "${mode}"`);
    }
    return { sslmode: "verify-full", ca: null };
  }
  if (mode === "disable") throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslrootcert names CAs for TLS, but sslmode=disable turns TLS off`);
  const pem = readPem("sslrootcert", rootcert, "CERTIFICATE");
  return { sslmode: mode === "verify-full" ? "verify-full" : "verify-ca", ca: pem };
}

/**
 * sslcert and sslkey as libpq reads them: the client certificate a server asks for (pg_hba's
 * `cert`, `clientcert=verify-full`), and its unencrypted private key. Like a CA file, they mean
 * TLS: prefer and allow then insist on it.
 */
function sslClient(mode: PostgresSslMode, given: { sslcert?: string; sslkey?: string }): { cert: string; key: string } | null {
  if (given.sslcert === undefined && given.sslkey === undefined) return null;
  if (given.sslcert === undefined || given.sslkey === undefined) {
    throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslcert and sslkey go together (the client certificate and its private key), got only ${given.sslcert === undefined ? "sslkey" : "sslcert"}`);
  }
  if (mode === "disable") throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslcert is a client certificate for TLS, but sslmode=disable turns TLS off`);
  const key = readPem("sslkey", given.sslkey, "PRIVATE KEY");
  if (key.includes("ENCRYPTED")) throw new ConfigError(`NOTESTREAM_DATABASE_URL: sslkey "${given.sslkey}" is encrypted; give the key without a passphrase (openssl pkey -in key.pem -out plain.pem)`);
  return { cert: readPem("sslcert", given.sslcert, "CERTIFICATE"), key };
}

/** A PEM file named by the URL, read now so that a wrong path stops the start; `kind`: what its -----BEGIN line must name. */
function readPem(param: string, path: string, kind: "CERTIFICATE" | "PRIVATE KEY"): string {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`NOTESTREAM_DATABASE_URL: cannot read ${param} "${path}" (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const begins = kind === "CERTIFICATE" ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;
  if (!begins.test(pem)) throw new ConfigError(`NOTESTREAM_DATABASE_URL: ${param} "${path}" holds no PEM ${kind.toLowerCase()} (-----BEGIN ${kind}-----)`);
  return pem;
}
