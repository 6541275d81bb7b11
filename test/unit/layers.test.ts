import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

// The layers of docs/ARCHITECTURE.md, read from the source itself: every relative import of every
// file under src/, `import type`, `export … from` and `import()` included, since a type's import
// ties two files together as much as a value's.
const SRC = resolve(import.meta.dir, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, "index.ts")].find((p) => existsSync(p));
}

/** Each file (relative to src/) with the src/ files it imports. */
const graph = new Map<string, string[]>(
  sourceFiles(SRC).map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .filter((i) => i.fileName.startsWith("."))
      .map((i) => resolveImport(file, i.fileName))
      .filter((p): p is string => p !== undefined && p.startsWith(SRC));
    return [relative(SRC, file), [...new Set(targets.map((p) => relative(SRC, p)))]];
  }),
);

const importsUnder = (dirs: string[], target: string) =>
  [...graph].flatMap(([file, targets]) => (dirs.some((d) => file.startsWith(d)) ? targets.filter((t) => t.startsWith(target)).map((t) => `${file} -> ${t}`) : []));

/** The groups of files that import one another round (Tarjan's strongly connected components). */
function cycles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) found.push(group.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("layers", () => {
  test("lib, db, http, jobs, mail and metrics import no feature module", () => {
    expect(importsUnder(["lib/", "db/", "http/", "jobs/", "mail/", "metrics/"], "modules/")).toEqual([]);
  });

  test("no feature module imports the MCP layer above it", () => {
    expect(importsUnder(["modules/"], "mcp/")).toEqual([]);
  });

  test("no file imports itself back through others, type imports included", () => {
    expect(cycles(graph)).toEqual([]);
  });
});

// Configuration is read in one place, so what a process was told is whatever loadConfig (or, for
// the client commands and the early choice of tables, serverAccess and databaseKind) made of it.
test("no file under src/ but src/config.ts reads process.env", () => {
  const readers = sourceFiles(SRC).filter((file) => relative(SRC, file) !== "config.ts" && readFileSync(file, "utf8").includes("process.env"));
  expect(readers.map((file) => relative(SRC, file))).toEqual([]);
});

// The two databases meet in one seam: db/tables.ts types PostgreSQL's tables and builder as
// SQLite's, once, for the queries written once. Anything else that needs a dialect's own client
// takes it from Deps.store, typed as what it is, so no other file casts between them.
test("no file but db/tables.ts casts between the two databases' types", () => {
  const cast = /as unknown as (?:typeof (?:sqlite|pg)|Db|PgDb|PgDatabase|BunSQLiteDatabase|\{\s*\$client)\b/;
  const casting = sourceFiles(SRC).filter((file) => relative(SRC, file) !== "db/tables.ts" && cast.test(readFileSync(file, "utf8")));
  expect(casting.map((file) => relative(SRC, file))).toEqual([]);
});
