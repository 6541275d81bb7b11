import { perStore, type Store } from "../../db/store";
import type { SearchIndex } from "./engine";
import { pgSearch } from "./postgres";
import { sqliteSearch } from "./sqlite";

/** The index of the database this process runs on: SQLite's FTS5, or PostgreSQL's tsvector under GIN. */
export function searchIndex(store: Store): SearchIndex {
  return perStore<SearchIndex>(store, { sqlite: sqliteSearch, postgres: pgSearch });
}
