// The compiled binary with NOTESTREAM_DATABASE_URL: `notestream migrate` migrates PostgreSQL from
// the migrations embedded in it (two at once: once), names the database without its password;
// a command that cannot reach the database says so in one line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { migrationJournal } from "../../src/db/pg/migrations.generated";
import { MIGRATIONS_TABLE } from "../../src/db/pg/migrate";
import { buildBinary, childEnv, cleanup, cli, tempDir, withTimeout } from "../helpers/binary";
import { freshDatabase, hasPostgres, type TestDatabase } from "../helpers/postgres";

const KNOWN = migrationJournal.entries.length;
// The throwaway server trusts loopback, so any password gets in: enough to see none is printed.
const SECRET = "s3cret-pa55word";

/** The test database's URL with a password in it (and the user it already names). */
function withPassword(url: string, password = SECRET): string {
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

describe.skipIf(!hasPostgres)("notestream migrate on PostgreSQL (compiled binary)", () => {
  let bin = "";
  const dbs: TestDatabase[] = [];
  beforeAll(() => {
    bin = buildBinary();
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    await cleanup();
  });

  test("two `notestream migrate` started at once apply each migration once; the output names the database, never the password", async () => {
    const db = await freshDatabase();
    dbs.push(db);
    const url = withPassword(db.url);
    const start = () =>
      Bun.spawn([bin, "migrate"], { cwd: tempDir("cwd"), env: childEnv({ NOTESTREAM_DATABASE_URL: url }), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const procs = [start(), start()];
    const results = await withTimeout(
      Promise.all(procs.map(async (p) => ({ code: await p.exited, out: await new Response(p.stdout).text(), err: await new Response(p.stderr).text() }))),
      20_000,
      "both migrations",
    );
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    const [row] = await db.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`);
    expect(row!.n).toBe(KNOWN);
    const where = `postgres@${new URL(db.url).host}/${db.name}`;
    const lines = results.map((r) => r.err.trim().split("\n").at(-1)).sort();
    expect(lines).toEqual(
      [
        `PostgreSQL database ${where} is up to date: applied ${KNOWN} migration${KNOWN === 1 ? "" : "s"} (${KNOWN} in all)`,
        `PostgreSQL database ${where} is up to date: nothing to apply (${KNOWN} in all)`,
      ].sort(),
    );
    for (const r of results) expect(r.out + r.err).not.toContain(SECRET);
    // A third run finds nothing to do, and leaves no SQLite data dir (./data) behind.
    const again = cli(["migrate"], { NOTESTREAM_DATABASE_URL: url });
    expect(again.stderr).toContain("nothing to apply");
    expect(existsSync(join(again.cwd, "data"))).toBe(false);
  });

  test("serve and the database commands on an unreachable server: one line without the password, no SQLite data dir; backup points to pg_dump", () => {
    const dataDir = `${tempDir("data")}/never`;
    const env = { NOTESTREAM_DATABASE_URL: withPassword("postgres://app@127.0.0.1:1/notes"), NOTESTREAM_DATA_DIR: dataDir };
    for (const args of [["serve"], ["account", "show", "--email", "a@example.com"]]) {
      const r = cli(args, env);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr.trim().split("\n")).toEqual([
        "notestream: cannot open PostgreSQL database app@127.0.0.1:1/notes: cannot connect (no server answers at that host and port, or the host name does not resolve)",
      ]);
    }
    const backup = cli(["backup", "x.db"], env);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain("backup copies the SQLite database; on PostgreSQL use pg_dump and pg_restore");
    expect(existsSync(dataDir)).toBe(false);
  });

  test("a bad URL or an unreachable server is one line without the password", () => {
    const bad = cli(["migrate"], { NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@db.example.com/notes?sslmode=maybe` });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got "maybe"');
    const wrongScheme = cli(["migrate"], { NOTESTREAM_DATABASE_URL: `mysql://app:${SECRET}@db.example.com/notes` });
    expect(wrongScheme.code).toBe(2);
    expect(wrongScheme.stderr).toContain('got "mysql://app:***@db.example.com/notes"');
    // Port 1 on loopback: refused at once.
    const down = cli(["migrate"], { NOTESTREAM_DATABASE_URL: `postgres://app:${SECRET}@127.0.0.1:1/notes?sslmode=disable` });
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toStartWith("notestream: cannot migrate PostgreSQL database app@127.0.0.1:1/notes: cannot connect (");
    for (const r of [bad, wrongScheme, down]) expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});
