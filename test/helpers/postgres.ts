/**
 * PostgreSQL for the tests: the server of NOTESTREAM_TEST_DATABASE_URL (set by `make test` from
 * scripts/ensure-postgres.sh), or, when that variable is not set at all (`bun test file` alone),
 * the throwaway cluster the script starts or finds running. Each test file gets databases of its
 * own on it, dropped after.
 *
 *   import { hasPostgres, freshDatabase, type TestDatabase } from "../helpers/postgres";
 *   describe.skipIf(!hasPostgres)("…", () => {
 *     let pg: TestDatabase;
 *     beforeAll(async () => { pg = await freshDatabase(); });
 *     afterAll(() => pg.drop());
 *     test("…", async () => { await pg.sql`SELECT 1`; });   // or pg.url for a process of its own
 *   });
 *
 * Without a server (no postgresql-15 and not root, or the server does not start) hasPostgres is
 * false, a warning says why once, and those tests skip, as the browser tests do without Chromium.
 */
import { SQL } from "bun";
import { migratePostgres } from "../../src/db/pg/migrate";
import { migrationJournal, migrationSql } from "../../src/db/pg/migrations.generated";
import { join } from "node:path";

const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "ensure-postgres.sh");

function serverUrl(): string {
  const given = process.env.NOTESTREAM_TEST_DATABASE_URL;
  // Set but empty: `make test` asked the script already and it found no server.
  if (given !== undefined) return given.trim();
  const r = Bun.spawnSync(["bash", SCRIPT], { stdout: "pipe", stderr: "pipe", timeout: 300_000 });
  const err = r.stderr.toString().trim();
  if (err && !err.includes("started a throwaway PostgreSQL")) console.warn(err);
  return r.stdout.toString().trim();
}

async function answers(url: string): Promise<string | null> {
  const sql = new SQL({ url, max: 1, connectionTimeout: 5 });
  try {
    await sql`SELECT 1`;
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await sql.close();
  }
}

/** The server's admin URL (its `postgres` database), or "" without one. */
export const POSTGRES_URL: string = await (async () => {
  const url = serverUrl();
  if (!url) {
    console.warn("PostgreSQL tests skipped: no server (make test installs Debian's postgresql-15 as root; or set NOTESTREAM_TEST_DATABASE_URL)");
    return "";
  }
  const failure = await answers(url);
  if (failure) {
    console.warn(`PostgreSQL tests skipped: ${new URL(url).host} does not answer (${failure})`);
    return "";
  }
  return url;
})();

export const hasPostgres = POSTGRES_URL !== "";

export interface TestDatabase {
  /** The database's name: ns_test_<pid>_<n>. */
  name: string;
  /** Its URL (for a config or another process). */
  url: string;
  /** A small pool on it, closed by drop(). */
  sql: SQL;
  /** Closes the pool and drops the database, whoever is still connected to it. */
  drop(): Promise<void>;
}

let counter = 0;
let sweptStale = false;

/**
 * A new database on the test server, for one test file (or one test): empty, or with `migrated`
 * notestream's schema already in it (a copy of a template migrated once per set of migrations,
 * which takes a few milliseconds where migrating takes a few hundred).
 */
export async function freshDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (!hasPostgres) throw new Error("freshDatabase() without a PostgreSQL server: guard the suite with describe.skipIf(!hasPostgres)");
  return withAdmin(async (admin) => {
    const name = nextName();
    await admin.unsafe(createStatement(name, opts.migrated ? await migratedTemplate(admin) : null));
    return made(name);
  });
}

let admin: SQL | null = null;

/**
 * The test process's one connection to the server's admin database, for `run`: every database is
 * made and dropped on it rather than on a connection (a server process) of its own. The first use
 * sweeps a killed run's databases.
 */
async function withAdmin<T>(run: (admin: SQL) => Promise<T>): Promise<T> {
  admin ??= new SQL({ url: POSTGRES_URL, max: 1 });
  if (!sweptStale) {
    sweptStale = true;
    await dropStale(admin);
  }
  return run(admin);
}

function nextName(): string {
  return `ns_test_${process.pid}_${++counter}`;
}

function createStatement(name: string, template: string | null): string {
  return `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`;
}

/** The TestDatabase of a database just made. */
function made(name: string): TestDatabase {
  const url = withDatabase(POSTGRES_URL, name);
  // Bun's SQL connects on first use: a caller that only hands the URL on opens nothing.
  const sql = new SQL({ url, max: 4 });
  return {
    name,
    url,
    sql,
    async drop() {
      await sql.close();
      await withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/**
 * freshDatabase for a caller that cannot await (test/helpers/binary.ts's `cli`, which runs the
 * binary with spawnSync): the same database, named and swept the same way, made by a short child
 * process (Bun's SQL has no synchronous query; about 0.1 s). A migrated one copies the template,
 * which `await prepareMigratedTemplate()` must have made beforehand (it migrates, so it is async).
 */
export function freshDatabaseSync(opts: { migrated?: boolean } = {}): TestDatabase {
  if (!hasPostgres) throw new Error("freshDatabaseSync() without a PostgreSQL server: guard the suite with describe.skipIf(!hasPostgres)");
  if (opts.migrated && !template) throw new Error("freshDatabaseSync({ migrated: true }) before prepareMigratedTemplate()");
  const name = nextName();
  const statement = createStatement(name, opts.migrated ? template : null);
  const code = "const sql = new Bun.SQL({ url: process.env.ADMIN_URL, max: 1 }); try { await sql.unsafe(process.env.STATEMENT); } finally { await sql.close(); }";
  const r = Bun.spawnSync([process.execPath, "-e", code], {
    env: { PATH: process.env.PATH ?? "", ADMIN_URL: POSTGRES_URL, STATEMENT: statement },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  if (r.exitCode !== 0) throw new Error(`${statement} failed (exit ${r.exitCode}): ${r.stderr.toString().trim()}`);
  return made(name);
}

/** Makes (or finds) the migrated template now, and sweeps a killed run's databases, as freshDatabase's first call does. */
export async function prepareMigratedTemplate(): Promise<void> {
  if (!hasPostgres) throw new Error("prepareMigratedTemplate() without a PostgreSQL server");
  await withAdmin(migratedTemplate);
}

let template: string | null = null;
let templateMade: Promise<string> | null = null;

/**
 * The migrated template of this binary's migrations (named by their hash), made once per server.
 * Asked once per process: callers at the same moment share the one connection, on which the lock
 * below would not keep them apart.
 */
function migratedTemplate(admin: SQL): Promise<string> {
  return (templateMade ??= makeTemplate(admin));
}

async function makeTemplate(admin: SQL): Promise<string> {
  // The journal too: its times decide what counts as applied.
  const hash = Bun.hash(JSON.stringify([migrationSql, migrationJournal])).toString(36);
  const name = `ns_tmpl_${hash}`;
  // Test processes may run at once: the first makes it under a lock, the others wait and find it.
  await admin`SELECT pg_advisory_lock(4242)`;
  try {
    const [found] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`;
    if (found!.n === 0) {
      const building = `${name}_building`;
      await admin.unsafe(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE "${building}"`);
      const sql = new SQL({ url: withDatabase(POSTGRES_URL, building), max: 1 });
      try {
        await migratePostgres(sql);
      } finally {
        await sql.close();
      }
      await admin.unsafe(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    }
  } finally {
    await admin`SELECT pg_advisory_unlock(4242)`;
  }
  return (template = name);
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The cluster outlives test runs (the script reuses it), so databases of a run that was killed
 * before its afterAll would pile up: drop those whose process is gone. Only on a server on this
 * machine, where a pid means something.
 */
async function dropStale(admin: SQL): Promise<void> {
  if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(POSTGRES_URL).hostname)) return;
  const rows = await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname LIKE 'ns\_test\_%'`;
  for (const { datname } of rows) {
    const pid = Number(/^ns_test_(\d+)_\d+$/.exec(datname)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
