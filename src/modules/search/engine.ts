import type { Deps } from "../../deps";
import type { Page } from "../../lib/pagination";

/** Where a note's best match is: one of a stream's chunks, or its row of titles and bodies. */
export const Source = { Chunk: 0, Note: 1 } as const;
export type Source = (typeof Source)[keyof typeof Source];

export interface HitRow {
  id: string;
  kind: "stream" | "editable";
  format: "plain" | "rich";
  filename: string | null;
  title: string;
  folderId: string | null;
  byteSize: number;
  updatedAt: number;
  src: Source;
  /** The chunk's seq; for a note's row of titles and bodies, SQLite's search_notes rowid (PostgreSQL: 0, the note's id finds it). */
  rid: number;
  total: number;
}

export interface HitFilter {
  workspaceId: string;
  /** A pinned token's note: nothing else is found. */
  noteId: string | null;
  folderId: string | null;
}

/** Marks the index puts around a matched token: Unicode noncharacters, which no text is meant to hold. */
export const OPEN = "\uFDD0";
export const CLOSE = "\uFDD1";
/** How many tokens a snippet shows, as FTS5's snippet() counts them. */
export const SNIPPET_WORDS = 16;

/**
 * How many of the newest matching texts of each kind a search ranks: stream chunks (what one
 * append, or one batch of appends to a stream, wrote) and notes' titles and bodies. Fewer than
 * that match: every match is ranked. More: the newest are, so that a common word's first page
 * costs what a rare word's does at any size (docs/PERFORMANCE.md); the hits, and X-Total-Count,
 * are the notes those matches are in.
 */
export const SEARCH_CANDIDATES = 1000;

/**
 * The full-text index's queries: the one place that knows how the database indexes text. `M` is
 * what one search looks for, as this index phrases it (made once per search by `match`).
 */
export interface SearchIndex<M = unknown> {
  /** The words (terms.ts, each searched as text, all of them) within the workspace, as this index asks for them. */
  match(words: readonly string[], workspaceId: string): M;
  /** One page of matching notes and how many match in all. */
  hits(deps: Deps, match: M, filter: HitFilter, page: Page): Promise<{ rows: HitRow[]; total: number }>;
  /** The best passage of the hit's chunk, matches marked. */
  chunkSnippet(deps: Deps, match: M, hit: HitRow): Promise<string>;
  /** The best passage of the hit's note body, and its title marked, from its row of titles and bodies. */
  noteSnippets(deps: Deps, match: M, hit: HitRow): Promise<{ title: string; body: string }>;
}

