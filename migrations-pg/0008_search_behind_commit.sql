-- Stream chunks are indexed behind the append's commit, in batches, by the search indexer
-- (src/modules/search/indexer.ts), instead of inside every append's transaction: an append
-- inserts its chunk with no search vector, and a NULL vector means "not indexed yet". The
-- indexer claims such chunks (FOR UPDATE SKIP LOCKED, so instances sharing the database never
-- index one twice) through the partial index below, which holds only them, and sets their
-- vectors: the writer's literal where it builds one (pg-vector.ts), PostgreSQL's own
-- to_tsvector otherwise. Chunk seqs from a sequence do not commit in order, so no watermark of
-- seqs could tell what is indexed; the NULL does, for each row. A crash between an append and
-- its indexing loses nothing: the next pass, at start-up too, finds the NULLs.
--
-- The trigger of 0006 no longer computes a vector on INSERT (that was the cost in the append's
-- transaction); it still recomputes an indexed chunk's vector when its text changes.
-- Titles and bodies (notes.search_vector) are not on the append path and stay as they are.
-- A database of the previous release has every vector set: nothing is indexed again.
CREATE OR REPLACE FUNCTION notestream_chunk_search_vector() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF NEW.text IS DISTINCT FROM OLD.text AND OLD.search_vector IS NOT NULL
    AND NEW.search_vector IS NOT DISTINCT FROM OLD.search_vector THEN
    NEW.search_vector := to_tsvector('notestream_search', notestream_search_text(NEW.text));
  END IF;
  RETURN NEW;
END
$f$;
--> statement-breakpoint
DROP TRIGGER "note_chunks_search_vector" ON "note_chunks";
--> statement-breakpoint
CREATE TRIGGER "note_chunks_search_vector" BEFORE UPDATE OF "text" ON "note_chunks"
  FOR EACH ROW EXECUTE FUNCTION notestream_chunk_search_vector();
--> statement-breakpoint
CREATE INDEX "note_chunks_unindexed" ON "note_chunks" ("seq") WHERE "search_vector" IS NULL;
