import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderMigrationsModule } from "../../scripts/embed-migrations";
import { openDatabase } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { onPostgres } from "../helpers/harness";

const root = join(import.meta.dir, "../..");

test("the embedded migrations module matches migrations/ (run `make migration` to regenerate)", () => {
  expect(readFileSync(join(root, "src/db/migrations.generated.ts"), "utf8")).toBe(renderMigrationsModule(root));
});

test("migrate creates the schema once and is idempotent; pragmas are set", () => {
  const dir = mkdtempSync(join(tmpdir(), "notestream-mig-"));
  const db = openDatabase({ dataDir: dir });
  migrate(db);
  migrate(db);
  const sqlite = db.$client;
  const tables = (sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  expect(tables).toEqual(expect.arrayContaining(["accounts", "workspaces", "workspace_members", "tokens", "folders", "notes", "note_chunks", "snapshots", "__drizzle_migrations"]));
  expect((sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n).toBeGreaterThan(0);
  expect((sqlite.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
  expect((sqlite.query("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys).toBe(1);
  // NORMAL in SQLite; the writer's WalSync makes commits durable before they are answered.
  expect((sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(1);
  expect((sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(5000);
  sqlite.close();
  // A second process opening the same file sees the same schema.
  const again = new Database(join(dir, "notestream.db"));
  expect(again.query("SELECT count(*) AS n FROM notes").get()).toEqual({ n: 0 });
});

// SQLite's migration history: PostgreSQL's schema starts at its own 0000, with no earlier release to mend.
test.skipIf(onPostgres)("migration 0008 counts inbox bodies stored before this release in their workspace's storage", async () => {
  const { harness } = await import("../helpers/harness");
  const h = await harness();
  try {
    const a = await h.account("dev");
    const b = await h.account("dev");
    const sqlite = h.deps.db.$client;
    const streamOf = async (owner: typeof a) =>
      (await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token: await h.token(owner), body: { text: "x" } })).json()).id as string;
    const [noteA, noteB] = [await streamOf(a), await streamOf(b)];
    // As an older release stored them: bodies on disk, nothing counted.
    const deliver = (id: string, note: string, bytes: number) =>
      sqlite.run("INSERT INTO inbox_deliveries (id, note_id, received_at, headers, body) VALUES (?, ?, 0, '{}', ?)", [id, note, Buffer.alloc(bytes, 120)]);
    deliver("ibx_1", noteA, 1000);
    deliver("ibx_2", noteA, 234);
    deliver("ibx_3", noteB, 5);
    const used = (ws: string) => (sqlite.query("SELECT storage_used AS n FROM workspaces WHERE id = ?").get(ws) as { n: number }).n;
    const before = [used(a.workspaceId), used(b.workspaceId)];
    sqlite.exec(readFileSync(join(root, "migrations/0008_inbox_bodies_in_storage.sql"), "utf8"));
    expect([used(a.workspaceId) - before[0]!, used(b.workspaceId) - before[1]!]).toEqual([1234, 5]);
  } finally {
    await h.close();
  }
});

test("a database migrated by a newer binary is refused, naming both versions; migrate records who migrated", async () => {
  const { SchemaTooNewError } = await import("../../src/db/migrate");
  const pkg = (await import("../../package.json")).default;
  const dir = mkdtempSync(join(tmpdir(), "notestream-mig-"));
  const db = openDatabase({ dataDir: dir });
  migrate(db);
  expect(db.$client.query("SELECT value FROM app_meta WHERE key = 'migrated_by'").get()).toEqual({ value: pkg.version });
  // What a newer release leaves behind: one more migration, and its version.
  db.$client.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)", [Date.now() + 365 * 86_400_000]);
  db.$client.run("UPDATE app_meta SET value = '9.9.9' WHERE key = 'migrated_by'");
  expect(() => migrate(db)).toThrow(SchemaTooNewError);
  try {
    migrate(db);
  } catch (e) {
    expect((e as Error).message).toContain("9.9.9");
    expect((e as Error).message).toContain(`this is notestream ${pkg.version}`);
  }
  db.$client.close();
});

// SQLite's migration history: PostgreSQL's schema starts at its own 0000, with no earlier release to mend.
test.skipIf(onPostgres)("migration 0011 counts notes an earlier release trashed (and uncounted) in their workspace's storage again", async () => {
  const { harness } = await import("../helpers/harness");
  const h = await harness();
  try {
    const a = await h.account("dev");
    const token = await h.token(a);
    const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t", plain_body: "x".repeat(1000) } } })).json();
    const sqlite = h.deps.db.$client;
    // As an earlier release trashed it: out of sight and out of the storage count.
    sqlite.run("UPDATE notes SET trashed_at = 1 WHERE id = ?", [id]);
    sqlite.run("UPDATE workspaces SET storage_used = storage_used - 1000 WHERE id = ?", [a.workspaceId]);
    const used = () => (sqlite.query("SELECT storage_used AS n FROM workspaces WHERE id = ?").get(a.workspaceId) as { n: number }).n;
    const before = used();
    sqlite.exec(readFileSync(join(root, "migrations/0011_trash_until_purge.sql"), "utf8").split("--> statement-breakpoint").at(-1)!);
    expect(used() - before).toBe(1000);
  } finally {
    await h.close();
  }
});
