// NOTESTREAM_DATABASE_URL and NOTESTREAM_DATABASE_POOL: parsed once at start, refused with a
// message that names what is wrong and never the password.
import { describe, expect, test } from "bun:test";
import { ConfigError, databaseKind, loadConfig, maskPassword } from "../../src/config";

const SECRET = "hunter2-secret";
const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).not.toContain(SECRET);
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe("NOTESTREAM_DATABASE_URL", () => {
  test("unset or empty: SQLite, as before", () => {
    expect(loadConfig({}).postgres).toBeNull();
    expect(loadConfig({ NOTESTREAM_DATABASE_URL: "  " }).postgres).toBeNull();
  });

  test("databaseKind agrees with loadConfig: blank or unset is SQLite, any URL is PostgreSQL", () => {
    expect(databaseKind({})).toBe("sqlite");
    expect(databaseKind({ NOTESTREAM_DATABASE_URL: "" })).toBe("sqlite");
    expect(databaseKind({ NOTESTREAM_DATABASE_URL: "  " })).toBe("sqlite");
    expect(databaseKind({ NOTESTREAM_DATABASE_URL: "postgres://app@db/notes" })).toBe("postgres");
  });

  test("a postgres:// or postgresql:// URL selects PostgreSQL; sslmode leaves the URL and defaults to prefer; the pool to 10", () => {
    expect(loadConfig({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@db.example.com:5433/notes?sslmode=verify-full` }).postgres).toEqual({
      url: `postgres://app:${SECRET}@db.example.com:5433/notes`,
      display: "app@db.example.com:5433/notes",
      database: "notes",
      sslmode: "verify-full",
      ca: null,
      clientCert: null,
      pool: 10,
    });
    const c = loadConfig({ NOTESTREAM_DATABASE_URL: "postgresql://db.internal/notestream", NOTESTREAM_DATABASE_POOL: "25" }).postgres!;
    expect([c.display, c.sslmode, c.pool]).toEqual(["db.internal/notestream", "prefer", 25]);
    for (const mode of ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]) {
      expect(loadConfig({ NOTESTREAM_DATABASE_URL: `postgres://h/db?sslmode=${mode}` }).postgres!.sslmode).toBe(mode as never);
    }
  });

  test("a password with reserved characters, percent-encoded, stays out of display", () => {
    const c = loadConfig({ NOTESTREAM_DATABASE_URL: "postgres://app:p%40ss%2Fw%3Ard@[::1]:5432/notes" }).postgres!;
    expect(c.display).toBe("app@[::1]:5432/notes");
    expect(c.url).toContain("p%40ss%2Fw%3Ard");
  });

  test("refusals say what is wrong, without the password", () => {
    expect(refusal({ NOTESTREAM_DATABASE_URL: `mysql://app:${SECRET}@h/db` })).toBe(
      'NOTESTREAM_DATABASE_URL must be a postgres:// or postgresql:// URL (unset it for SQLite), got "mysql://app:***@h/db"',
    );
    expect(refusal({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@h/db?sslmode=strict` })).toBe(
      'NOTESTREAM_DATABASE_URL: sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got "strict"',
    );
    expect(refusal({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@h` })).toContain("must name one database after the host");
    expect(refusal({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@h/a/b` })).toContain("must name one database after the host");
    expect(refusal({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@h/db?application_name=x` })).toBe(
      'NOTESTREAM_DATABASE_URL: unknown parameter "application_name" (only sslmode, sslrootcert, sslcert and sslkey are read), got "postgres://app:***@h/db?application_name=x"',
    );
    expect(refusal({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@/db` })).toContain("is not a URL like postgres://");
    expect(refusal({ NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@h:99999/db` })).toContain("percent-encode");
    expect(refusal({ NOTESTREAM_DATABASE_URL: "postgres://h/db", NOTESTREAM_DATABASE_POOL: "0" })).toBe('NOTESTREAM_DATABASE_POOL must be a number from 1 to 1000, got "0"');
    expect(refusal({ NOTESTREAM_DATABASE_POOL: "2.5" })).toContain("NOTESTREAM_DATABASE_POOL must be a whole number");
  });

  test("maskPassword hides everything up to the last @, so an unencoded @ in a password does not leak its tail", () => {
    expect(maskPassword("postgres://app:pa@ss@h/db")).toBe("postgres://app:***@h/db");
    expect(maskPassword("postgres://app@h/db")).toBe("postgres://app@h/db");
    expect(maskPassword("postgres://h/db")).toBe("postgres://h/db");
  });
});
