-- A chunk's search vector from the writer where it can build it, from PostgreSQL where it cannot.
-- As a generated column (0005), PostgreSQL tokenized every chunk inside the append's transaction:
-- notestream_search_text()'s lower case and regular expression, the parser, two dictionaries,
-- about 0.5 ms of its CPU for a batch of 25 log lines, a third of its work per batch. For text
-- whose letters are ASCII or Latin (European languages; its punctuation, symbols and emoji may be
-- anything) the writer now sends the same vector as a literal (src/modules/search/pg-vector.ts),
-- which PostgreSQL reads at a seventh of the cost; any other text (Greek, Cyrillic, CJK) it sends
-- without one, and this trigger computes it exactly as the generated column did. So does
-- an INSERT that names no vector (an older binary's during a rolling upgrade), and an UPDATE that
-- changes the text but not the vector. Dropping the expression keeps every stored vector and
-- rewrites nothing.
ALTER TABLE "note_chunks" ALTER COLUMN "search_vector" DROP EXPRESSION;
--> statement-breakpoint
CREATE FUNCTION notestream_chunk_search_vector() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF NEW.search_vector IS NULL
    OR (TG_OP = 'UPDATE' AND NEW.text IS DISTINCT FROM OLD.text AND NEW.search_vector IS NOT DISTINCT FROM OLD.search_vector) THEN
    NEW.search_vector := to_tsvector('notestream_search', notestream_search_text(NEW.text));
  END IF;
  RETURN NEW;
END
$f$;
--> statement-breakpoint
CREATE TRIGGER "note_chunks_search_vector" BEFORE INSERT OR UPDATE OF "text", "search_vector" ON "note_chunks"
  FOR EACH ROW EXECUTE FUNCTION notestream_chunk_search_vector();
