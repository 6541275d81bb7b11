-- The search vectors of 0002_search.sql, stored beside their text instead of recomputed by every
-- search that reads a row. The GIN indexes over the bare expressions made PostgreSQL compute
-- a row's vector again (its text through notestream_search_text() and the parser) wherever the
-- index could not answer alone:
-- - a word of several tokens (`user=bob`, `api.example.com`, `10.0.1.2`) is a phrase, which the
--   index does not hold positions for, so every row holding all its tokens was rechecked;
-- - a common word (in most rows) led the planner to a sequential scan that computed the vector of
--   every row, since the cost of the inlined expression is hidden from it.
-- Either took 47 s on 200,000 chunks of 25 log lines, and 0.5 s with stored vectors
-- (docs/PERFORMANCE.md "Search on PostgreSQL"). The price is storage: a vector takes about
-- as much as its text uncompressed, so note_chunks is about four times its size and the
-- database about twice. The vectors are computed as before, once per row written, and only
-- when their text (the title or body of a note) changes: not on a note's counters after an
-- append.
--
-- Outside the drizzle schema, as the indexes were: nothing selects these columns but search
-- (src/modules/search/repo.ts), and drizzle's queries name their columns.
ALTER TABLE "note_chunks" ADD COLUMN "search_vector" tsvector
  GENERATED ALWAYS AS (to_tsvector('notestream_search', notestream_search_text("text"))) STORED;
--> statement-breakpoint
DROP INDEX "note_chunks_search";
--> statement-breakpoint
CREATE INDEX "note_chunks_search" ON "note_chunks" USING gin ("search_vector");
--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "search_vector" tsvector
  GENERATED ALWAYS AS (
    setweight(to_tsvector('notestream_search', notestream_search_text("title")), 'A')
    || setweight(to_tsvector('notestream_search', notestream_search_text(coalesce("body", ''))), 'D')
  ) STORED;
--> statement-breakpoint
DROP INDEX "notes_search";
--> statement-breakpoint
CREATE INDEX "notes_search" ON "notes" USING gin ("search_vector");
