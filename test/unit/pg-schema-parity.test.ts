// The SQLite schema (src/db/schema) and its PostgreSQL twin (src/db/pg/schema) describe one
// database in two dialects. A change to one that forgets the other fails here: every table,
// column, index, key and foreign key of each must have its counterpart, with the types mapped
// as src/db/pg/schema/types.ts says.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getTableName, is, SQL, type Column } from "drizzle-orm";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { PG_MIGRATIONS, renderMigrationsModule } from "../../scripts/embed-migrations";
import * as pgSchema from "../../src/db/pg/schema";
import * as sqliteSchema from "../../src/db/schema";

const root = join(import.meta.dir, "../..");

const sqliteTables = new Map(Object.values(sqliteSchema).filter((v) => is(v, SQLiteTable)).map((t) => [getTableName(t as SQLiteTable), t as SQLiteTable]));
const pgTables = new Map(Object.values(pgSchema).filter((v) => is(v, PgTable)).map((t) => [getTableName(t as PgTable), t as PgTable]));

/** A partial index's WHERE as text: both schemas write it as one sql`` literal. */
function sqlText(where: SQL | undefined): string | null {
  if (!where) return null;
  return where.queryChunks
    .map((c) => {
      const value = (c as { value?: unknown }).value;
      if (Array.isArray(value)) return value.join("");
      throw new Error("a partial index's condition should be plain SQL text, without parameters");
    })
    .join("")
    .trim();
}

type AnyColumn = Column & { primary: boolean; isUnique: boolean; uniqueName?: string; enumValues?: readonly string[]; default?: unknown; getSQLType(): string };

/** Everything of a column that must agree, in dialect-neutral terms. */
function columnShape(c: AnyColumn) {
  return {
    notNull: c.notNull,
    primary: c.primary,
    unique: c.isUnique ? (c.uniqueName ?? true) : false,
    enumValues: c.enumValues ?? null,
    default: c.default instanceof SQL ? sqlText(c.default) : (c.default ?? null),
  };
}

/** The PostgreSQL types a SQLite column may become (types.ts). */
function expectedPgTypes(table: string, c: AnyColumn): string[] {
  switch (c.columnType) {
    case "SQLiteText":
      return ["PgText"];
    case "SQLiteBoolean":
      return ["PgBoolean"];
    case "SQLiteBlobBuffer":
      return ["PgCustomColumn:bytea"];
    case "SQLiteInteger":
      // Times in epoch ms, durations in ms, byte counts and rowid keys pass 2^31.
      if (c.primary || /(^|_)(at|ms|bytes|size|used)$/.test(c.name)) return ["PgBigInt53"];
      return ["PgInteger", "PgBigInt53"];
    default:
      throw new Error(`${table}.${c.name}: SQLite column type ${c.columnType} has no mapping in this test yet`);
  }
}

const pgType = (c: AnyColumn) => (c.columnType === "PgCustomColumn" ? `PgCustomColumn:${c.getSQLType()}` : c.columnType);

describe("the PostgreSQL schema keeps step with the SQLite schema", () => {
  test("the same tables", () => {
    expect([...pgTables.keys()].sort()).toEqual([...sqliteTables.keys()].sort());
    expect(sqliteTables.size).toBeGreaterThan(20);
  });

  for (const [name, sqliteTable] of sqliteTables) {
    test(`${name}: columns, keys, indexes and foreign keys`, () => {
      const pgTable = pgTables.get(name);
      if (!pgTable) throw new Error(`table ${name} is in src/db/schema but not in src/db/pg/schema`);
      const s = sqliteConfig(sqliteTable);
      const p = pgConfig(pgTable);

      const sCols = new Map(s.columns.map((c) => [c.name, c as unknown as AnyColumn]));
      const pCols = new Map(p.columns.map((c) => [c.name, c as unknown as AnyColumn]));
      expect([...pCols.keys()].sort()).toEqual([...sCols.keys()].sort());
      for (const [col, sc] of sCols) {
        const pc = pCols.get(col)!;
        const where = `${name}.${col}`;
        const allowed = expectedPgTypes(name, sc);
        expect({ where, type: pgType(pc) }).toEqual({ where, type: allowed.includes(pgType(pc)) ? pgType(pc) : allowed.join(" or ") });
        // SQLite's INTEGER PRIMARY KEY is its rowid, numbered by the database: an identity here.
        const rowid = sc.primary && sc.columnType === "SQLiteInteger";
        const identity = (pc as unknown as { generatedIdentity?: unknown }).generatedIdentity !== undefined;
        expect({ where, identity }).toEqual({ where, identity: rowid });
        expect({ where, ...columnShape(pc) }).toEqual({ where, ...columnShape(sc) });
      }

      const pkOf = (pks: { columns: { name: string }[]; getName(): string }[]) => pks.map((k) => ({ name: k.getName(), columns: k.columns.map((c) => c.name) }));
      expect(pkOf(p.primaryKeys)).toEqual(pkOf(s.primaryKeys));

      const indexOf = (i: { config: { name?: string; columns: unknown[]; unique: boolean; where?: SQL } }) => ({
        name: i.config.name,
        columns: i.config.columns.map((c) => (c as { name: string }).name),
        unique: i.config.unique,
        where: sqlText(i.config.where),
      });
      const byName = (a: { name?: string }, b: { name?: string }) => String(a.name).localeCompare(String(b.name));
      expect(p.indexes.map(indexOf).sort(byName)).toEqual(s.indexes.map(indexOf).sort(byName));

      const fkOf = (fk: { reference(): { columns: { name: string }[]; foreignColumns: { name: string }[]; foreignTable: unknown }; onDelete?: string }) => {
        const r = fk.reference();
        return {
          columns: r.columns.map((c) => c.name),
          references: `${getTableName(r.foreignTable as SQLiteTable)}(${r.foreignColumns.map((c) => c.name).join(",")})`,
          onDelete: fk.onDelete ?? "no action",
        };
      };
      const byColumns = (a: { columns: string[] }, b: { columns: string[] }) => a.columns.join().localeCompare(b.columns.join());
      expect(p.foreignKeys.map(fkOf).sort(byColumns)).toEqual(s.foreignKeys.map(fkOf).sort(byColumns));

      const named = (xs: { name?: string; getName?: () => string | undefined }[]) => xs.map((x) => x.name ?? x.getName?.()).sort();
      expect(named(p.uniqueConstraints)).toEqual(named(s.uniqueConstraints));
      expect(named(p.checks)).toEqual(named(s.checks));
    });
  }
});

test("the embedded PostgreSQL migrations module matches migrations-pg/ (run `make migration-pg` to regenerate)", () => {
  expect(readFileSync(join(root, PG_MIGRATIONS.module), "utf8")).toBe(renderMigrationsModule(root, PG_MIGRATIONS));
});
