/**
 * Running it as a service, with the compiled binary: an online backup under append load, a
 * restore that a server then serves, the guard against a database from a newer release, and the
 * one-line answer of a second server on a busy port.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json";
import { MIGRATIONS_TABLE } from "../../src/db/pg/migrate";
import {
  BUILD_TIMEOUT_MS,
  append,
  buildBinary,
  childEnv,
  cleanup,
  cli,
  databaseOf,
  onPostgres,
  provision,
  readStream,
  request,
  startServer,
  tempDir,
} from "../helpers/binary";

let BIN = "";
beforeAll(() => void (BIN = buildBinary()), BUILD_TIMEOUT_MS);
afterAll(() => cleanup());

describe("backup and restore", () => {
  // backup and restore copy the SQLite file; on PostgreSQL they point to pg_dump (the test after these).
  test.skipIf(onPostgres)("a backup taken under append load holds every append acknowledged before it began; a server on the restored copy serves the same tokens and notes", async () => {
    const dataDir = tempDir("data");
    const { token } = provision(dataDir);
    // No rate limit in the way of the load (a Dev token may append 300 times a minute).
    const server = await startServer(dataDir, { NOTESTREAM_LIMIT_PROFILE: "unlimited" });
    // Enough data (about 40 MB) that the copy takes a while, so appends land while it runs.
    const big = "x".repeat(500_000);
    for (let n = 0; n < 16; n++) await Promise.all([0, 1, 2, 3, 4].map(() => append(server.base, token, `bulk-${n}.log`, big)));
    const acknowledged: number[] = [];
    let running = true;
    // Four writers appending numbered lines for as long as the backup runs.
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; running; i++) {
        const n = w * 1_000_000 + i;
        const res = await append(server.base, token, "load.log", `line ${n}`);
        if (res.status === 200 || res.status === 201) acknowledged.push(n);
      }
    });
    // The backup starts once the load is under way (what a machine busy with other work takes longer to reach).
    for (const until = Date.now() + 10_000; acknowledged.length <= 60 && Date.now() < until; ) await Bun.sleep(20);
    const before = new Set(acknowledged);
    const file = join(tempDir("backup"), "notestream-backup.db");
    // Spawned, not run synchronously: the writers keep appending while the backup runs.
    const proc = Bun.spawn([BIN, "backup", file], { env: childEnv({ NOTESTREAM_DATA_DIR: dataDir }), stdout: "pipe", stderr: "pipe" });
    const code = await proc.exited;
    const during = acknowledged.length - before.size;
    running = false;
    await Promise.all(writers);
    expect(code).toBe(0);
    expect((await new Response(proc.stdout).text()).trim()).toBe(file);
    expect(before.size).toBeGreaterThan(50);
    expect(during).toBeGreaterThan(0);

    const copy = new Database(file, { readonly: true });
    expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    const stored = new Set(
      (copy.query("SELECT c.text FROM note_chunks c JOIN notes n ON n.id = c.note_id WHERE n.filename = 'load.log'").all() as { text: string }[]).flatMap((r) => r.text.split("\n").filter(Boolean).map((l) => Number(l.slice(5)))),
    );
    copy.close();
    for (const n of before) expect(stored.has(n)).toBe(true);

    // A restore is refused while a server runs on the data dir, and works once it is stopped.
    const refused = cli(["restore", file], { NOTESTREAM_DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is running");
    await server.stop("SIGTERM");

    const restoredDir = tempDir("restored");
    const restored = cli(["restore", file], { NOTESTREAM_DATA_DIR: restoredDir });
    expect(restored.code).toBe(0);
    const again = await startServer(restoredDir);
    try {
      const text = await readStream(again.base, token, "load.log");
      const lines = new Set(text.split("\n").filter(Boolean).map((l) => Number(l.slice(5))));
      expect(lines).toEqual(stored);
    } finally {
      await again.stop("SIGTERM");
    }

    // Restoring over an existing database keeps the old one aside.
    const over = cli(["restore", file], { NOTESTREAM_DATA_DIR: dataDir });
    expect(over.code).toBe(0);
    expect(readdirSync(dataDir).some((f) => f.startsWith("notestream.db.before-restore-"))).toBe(true);
  }, 60_000);

  // SQLite's backup file and database file; on PostgreSQL both commands are refused (next test).
  test.skipIf(onPostgres)("bad arguments and files are refused with one clear line", () => {
    const dataDir = tempDir("data");
    provision(dataDir);
    expect(cli(["backup"], { NOTESTREAM_DATA_DIR: dataDir }).code).toBe(2);
    const notDb = join(tempDir("x"), "not-a-db");
    Bun.write(notDb, "hello");
    const r = cli(["restore", notDb], { NOTESTREAM_DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    const existing = join(dataDir, "notestream.db");
    expect(cli(["backup", existing], { NOTESTREAM_DATA_DIR: dataDir }).code).toBe(1);
    expect(existsSync(existing)).toBe(true);
  });

  test.skipIf(!onPostgres)("on PostgreSQL, backup and restore write and replace nothing, and point to pg_dump and pg_restore in one line", () => {
    const dataDir = tempDir("data");
    provision(dataDir);
    const file = join(tempDir("backup"), "notestream-backup.db");
    for (const command of ["backup", "restore"]) {
      const r = cli([command, file], { NOTESTREAM_DATA_DIR: dataDir });
      expect({ command, code: r.code }).toEqual({ command, code: 2 });
      expect(r.stderr.split("\n")[0]).toBe(`notestream: ${command} copies the SQLite database; on PostgreSQL use pg_dump and pg_restore (docs/SCALING.md)`);
      expect(r.stdout).toBe("");
    }
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe("starting", () => {
  test("a database migrated by a newer release is refused, naming both versions, in one line", async () => {
    const dataDir = tempDir("data");
    provision(dataDir);
    const future = Date.now() + 365 * 86_400_000;
    const pg = databaseOf(dataDir);
    if (pg) {
      await pg.sql.unsafe(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES ('future', $1)`, [future]);
      await pg.sql`UPDATE app_meta SET value = '9.9.9' WHERE key = 'migrated_by'`;
    } else {
      const db = new Database(join(dataDir, "notestream.db"));
      db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)", [future]);
      db.run("UPDATE app_meta SET value = '9.9.9' WHERE key = 'migrated_by'");
      db.close();
    }
    for (const command of [["migrate"], ["serve"], ["token", "list", "--email", "ops@example.com"]]) {
      const r = cli(command, { NOTESTREAM_DATA_DIR: dataDir, NOTESTREAM_PORT: "0" });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("9.9.9");
      expect(r.stderr).toContain(`this is notestream ${pkg.version}`);
      expect(r.stderr.trim().split("\n").length).toBe(1);
    }
  });

  test("a second server on a busy port says so in one line and exits 1", async () => {
    const dataDir = tempDir("data");
    provision(dataDir);
    const server = await startServer(dataDir);
    try {
      const r = cli(["serve"], { NOTESTREAM_DATA_DIR: tempDir("other"), NOTESTREAM_PORT: String(server.port) });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${server.port}`);
      expect(r.stderr).toContain("already in use");
      expect(r.stderr.trim().split("\n").length).toBe(1);
      expect((await request(server.base, "GET", "/up")).status).toBe(200);
    } finally {
      await server.stop("SIGTERM");
    }
  });
});
