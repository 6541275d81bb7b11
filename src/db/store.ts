import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

/**
 * The database this process uses, chosen once, in runtime.ts, from the configuration: what the few
 * parts that differ between the two databases take instead of asking the query builder which one
 * it is. Each variant carries its own client with its own type, so code that needs PostgreSQL's
 * pool or SQLite's file gets it without a cast.
 *
 * Where a feature's SQL differs, it keeps one text per database beside one code path and picks by
 * `kind` (`perStore`), as ntfy keeps its message cache's queries per database.
 */
export type Store =
  | { readonly kind: "sqlite"; readonly client: Database; readonly dataDir: string }
  | {
      readonly kind: "postgres";
      /** The pool: for what runs outside the writer's transaction (a snapshot, a size). */
      readonly pool: SQL;
      /** Inside a write, the writer's connection in its transaction; anywhere else, the pool. */
      connection(): SQL;
    };

/** This database's one of a pair of values (a query's text, an implementation). */
export function perStore<T>(store: Store, choices: { sqlite: T; postgres: T }): T {
  return choices[store.kind];
}

/**
 * Whether several processes may share this database: PostgreSQL's instances do; SQLite's database
 * has one server (the command line beside it runs no background work).
 */
export function sharedDatabase(store: Store): boolean {
  return store.kind === "postgres";
}
