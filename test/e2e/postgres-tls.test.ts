// The compiled binary over TLS to a real PostgreSQL (scripts/ensure-postgres.sh --tls: a server
// whose certificate a CA of its own signs, naming the host `localhost` only): each sslmode does
// what libpq's does, sslrootcert names the CA, and every refusal is one line that says what to
// change, without the password.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { append, buildBinary, cleanup, cli, readStream, startServer, tempDir } from "../helpers/binary";

const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "ensure-postgres.sh");
const STATE = process.env.NOTESTREAM_TLS_PG_DIR ?? join(process.env.TMPDIR ?? tmpdir(), `notestream-tls-pg-${process.getuid?.() ?? 0}`);
const CA = join(STATE, "ca.pem");
/** A client certificate of the role notestream_cert, which the server lets in only with it (pg_hba's `cert`). */
const CLIENT = { cert: join(STATE, "client.pem"), key: join(STATE, "client.key") };
const SECRET = "tls-pa55word";

/** The TLS cluster's URL (started, or found running), or "" when this machine cannot have one. */
function tlsServer(): string {
  const r = Bun.spawnSync(["bash", SCRIPT, "start", "--tls"], { stdout: "pipe", stderr: "pipe", timeout: 300_000 });
  const url = r.stdout.toString().trim().split("\n").at(-1) ?? "";
  if (!url) console.warn(`no PostgreSQL with TLS for these tests: ${r.stderr.toString().trim()}`);
  return url;
}

const SERVER = tlsServer();
const DATABASE = `ns_tls_${process.pid}`;

/** The test database on the TLS server, reached by `host`, with a password (which the server ignores: trust) and these parameters. */
function urlOf(host: string, params: string, user = "postgres"): string {
  const u = new URL(SERVER);
  u.hostname = host;
  u.username = user;
  u.password = SECRET;
  u.pathname = `/${DATABASE}`;
  return `${u.toString()}${params ? `?${params}` : ""}`;
}

/** `run` on a plain connection to the TLS server's admin database. */
async function withAdmin<T>(run: (admin: InstanceType<typeof Bun.SQL>) => Promise<T>): Promise<T> {
  const admin = new Bun.SQL({ url: SERVER, tls: "disable", max: 1 });
  try {
    return await run(admin);
  } finally {
    await admin.close();
  }
}

/** The test database's sessions, encrypted or not, as the server sees them. */
const sessions = () =>
  withAdmin(async (admin) =>
    (await admin<{ ssl: boolean }[]>`SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = ${DATABASE}`).map((r) => r.ssl),
  );

describe.skipIf(!SERVER)("PostgreSQL over TLS (compiled binary)", () => {
  beforeAll(async () => {
    buildBinary();
    await withAdmin(async (admin) => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${DATABASE}`);
      await admin.unsafe(`CREATE DATABASE ${DATABASE}`);
    });
  });
  afterAll(async () => {
    await cleanup();
    await withAdmin((admin) => admin.unsafe(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`));
  });

  test("sslmode=verify-full with sslrootcert: serve answers appends, and every connection of its pool is encrypted", async () => {
    const dataDir = tempDir("tls");
    const env = { NOTESTREAM_DATABASE_URL: urlOf("localhost", `sslmode=verify-full&sslrootcert=${encodeURIComponent(CA)}`), NOTESTREAM_DATA_DIR: dataDir };
    expect(cli(["migrate"], env).code).toBe(0);
    expect(cli(["account", "create", "--email", "tls@example.com", "--plan", "dev"], env).code).toBe(0);
    const minted = cli(["token", "create", "--email", "tls@example.com", "--scope", "read,write"], env);
    expect(minted.code).toBe(0);
    const token = minted.stdout.trim();
    const server = await startServer(dataDir, env);
    try {
      for (let i = 0; i < 5; i++) expect((await append(server.base, token, "tls.log", `line ${i}`)).status).toBe(i === 0 ? 201 : 200);
      expect(await readStream(server.base, token, "tls.log")).toBe("line 0\nline 1\nline 2\nline 3\nline 4\n");
      const ssl = await sessions();
      expect(ssl.length).toBeGreaterThanOrEqual(2);
      expect(ssl.every(Boolean)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(server.stderr() + server.logs.join("\n")).not.toContain(SECRET);
  });

  test("each sslmode connects where libpq would: require without a CA named, verify-ca with the CA whatever the host name, verify-full by the name the certificate holds", () => {
    const ok = (host: string, params: string) => {
      const r = cli(["migrate"], { NOTESTREAM_DATABASE_URL: urlOf(host, params) });
      return { params, host, code: r.code, err: r.code === 0 ? "" : r.stderr.trim() };
    };
    const caParam = `sslrootcert=${encodeURIComponent(CA)}`;
    for (const [host, params] of [
      ["127.0.0.1", "sslmode=disable"],
      ["127.0.0.1", ""],
      ["127.0.0.1", "sslmode=allow"],
      ["127.0.0.1", "sslmode=require"],
      // The certificate names localhost only: verify-ca does not ask.
      ["127.0.0.1", `sslmode=verify-ca&${caParam}`],
      // libpq: a root certificate given makes require check the chain, as verify-ca.
      ["127.0.0.1", `sslmode=require&${caParam}`],
      ["localhost", `sslmode=verify-full&${caParam}`],
      ["localhost", caParam],
    ] as const) {
      expect(ok(host, params)).toEqual({ params, host, code: 0, err: "" });
    }
  });

  test("a certificate that cannot be trusted, or a host name it does not hold: one line that says what to change", () => {
    const refusal = (host: string, params: string) => {
      const r = cli(["migrate"], { NOTESTREAM_DATABASE_URL: urlOf(host, params) });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      return lines[0]!;
    };
    const where = `postgres@localhost:${new URL(SERVER).port}/${DATABASE}`;
    // No CA named: the test CA is no public one.
    expect(refusal("localhost", "sslmode=verify-full")).toStartWith(
      `notestream: cannot migrate PostgreSQL database ${where}: the server's TLS certificate is not signed by a publicly trusted CA: name the CA that signs it with sslrootcert=/path/to/ca.pem (`,
    );
    expect(refusal("localhost", "sslmode=verify-ca")).toContain("not signed by a publicly trusted CA");
    expect(refusal("localhost", "sslrootcert=system")).toContain("not signed by a publicly trusted CA");
    // Another CA's certificate in the file.
    const otherCa = join(tempDir("ca"), "other.pem");
    const made = Bun.spawnSync(
      ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=other", "-keyout", `${otherCa}.key`, "-out", otherCa],
      { stdout: "ignore", stderr: "pipe" },
    );
    expect(made.exitCode).toBe(0);
    expect(refusal("localhost", `sslmode=verify-full&sslrootcert=${encodeURIComponent(otherCa)}`)).toContain(
      "the server's TLS certificate is not signed by a CA in the sslrootcert file (",
    );
    // The right CA, but 127.0.0.1 is not a name the certificate holds.
    expect(refusal("127.0.0.1", `sslmode=verify-full&sslrootcert=${encodeURIComponent(CA)}`)).toStartWith(
      `notestream: cannot migrate PostgreSQL database postgres@127.0.0.1:${new URL(SERVER).port}/${DATABASE}: the server's TLS certificate does not name the host 127.0.0.1: connect by a name it holds, or check the CA only with sslmode=verify-ca (`,
    );
  });

  test("sslrootcert that cannot be read, holds no certificate, or contradicts sslmode is refused before connecting (exit 2)", () => {
    const dir = tempDir("ca");
    const notPem = join(dir, "not.pem");
    writeFileSync(notPem, "hello\n");
    const missing = join(dir, "missing.pem");
    expect(existsSync(missing)).toBe(false);
    for (const [params, message] of [
      [`sslrootcert=${missing}`, `NOTESTREAM_DATABASE_URL: cannot read sslrootcert "${missing}" (ENOENT)`],
      [`sslrootcert=${notPem}`, `NOTESTREAM_DATABASE_URL: sslrootcert "${notPem}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`],
      [`sslmode=disable&sslrootcert=${encodeURIComponent(CA)}`, "NOTESTREAM_DATABASE_URL: sslrootcert names CAs for TLS, but sslmode=disable turns TLS off"],
      ["sslmode=require&sslrootcert=system", 'NOTESTREAM_DATABASE_URL: sslrootcert=system checks the host name too, so it needs sslmode=verify-full (or no sslmode), got "require"'],
      [`sslcert=${CLIENT.cert}`, "NOTESTREAM_DATABASE_URL: sslcert and sslkey go together (the client certificate and its private key), got only sslcert"],
      [`sslcert=${CLIENT.cert}&sslkey=${CA}`, `NOTESTREAM_DATABASE_URL: sslkey "${CA}" holds no PEM private key (-----BEGIN PRIVATE KEY-----)`],
      [`sslcert=${CLIENT.key}&sslkey=${CLIENT.key}`, `NOTESTREAM_DATABASE_URL: sslcert "${CLIENT.key}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`],
      [`sslmode=disable&sslcert=${CLIENT.cert}&sslkey=${CLIENT.key}`, "NOTESTREAM_DATABASE_URL: sslcert is a client certificate for TLS, but sslmode=disable turns TLS off"],
    ] as const) {
      const r = cli(["migrate"], { NOTESTREAM_DATABASE_URL: urlOf("localhost", params) });
      expect({ params, code: r.code, err: r.stderr.trim().split("\n")[0] }).toEqual({ params, code: 2, err: `notestream: ${message}` });
    }
  });

  test("a server that asks for a client certificate: sslcert and sslkey get in, and serve runs on them; without them, one line from the server", async () => {
    const ca = `sslrootcert=${encodeURIComponent(CA)}`;
    const client = `sslcert=${encodeURIComponent(CLIENT.cert)}&sslkey=${encodeURIComponent(CLIENT.key)}`;
    const without = cli(["migrate"], { NOTESTREAM_DATABASE_URL: urlOf("localhost", `sslmode=verify-full&${ca}`, "notestream_cert") });
    expect(without.code).toBe(1);
    expect(without.stderr.trim().split("\n")).toHaveLength(1);
    expect(without.stderr).toEndWith("connection requires a valid client certificate: give one with sslcert=/path/client.pem&sslkey=/path/client.key\n");
    expect(without.stderr).not.toContain(SECRET);
    for (const params of [`sslmode=verify-full&${ca}&${client}`, `sslmode=require&${client}`, client]) {
      const r = cli(["migrate"], { NOTESTREAM_DATABASE_URL: urlOf("localhost", params, "notestream_cert") });
      expect({ params, code: r.code, err: r.code === 0 ? "" : r.stderr }).toEqual({ params, code: 0, err: "" });
    }
    const dataDir = tempDir("tls-client");
    const server = await startServer(dataDir, { NOTESTREAM_DATABASE_URL: urlOf("localhost", `sslmode=verify-full&${ca}&${client}`, "notestream_cert") });
    try {
      expect((await fetch(`${server.base}/up`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test("sslmode=require against a server without TLS: one line naming sslmode=prefer", async () => {
    // The tests' own cluster has no TLS.
    const { freshDatabase } = await import("../helpers/postgres");
    const db = await freshDatabase();
    try {
      const u = new URL(db.url);
      u.password = SECRET;
      const r = cli(["migrate"], { NOTESTREAM_DATABASE_URL: `${u.toString()}?sslmode=require` });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("the server does not offer TLS, and sslmode=require insists on it (sslmode=prefer connects without it)");
      expect(r.stderr).not.toContain(SECRET);
      expect(cli(["migrate"], { NOTESTREAM_DATABASE_URL: `${u.toString()}?sslmode=prefer` }).code).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
