-- Full-text search of note contents on PostgreSQL, the twin of migrations/0013_search.sql (FTS5).
-- GIN indexes over tsvector expressions of the rows themselves: PostgreSQL keeps them in step with
-- every write (appends, edits, restores, retention, purges, cascades) in the same transaction,
-- with no trigger and no copy of the text. Outside the drizzle schema: drizzle-kit cannot express
-- text search configurations or expression indexes; the queries are in src/modules/search/repo.ts
-- (pgSearch), which must write these expressions exactly as here for the planner to use the indexes.
--
-- Words as SQLite's unicode61 remove_diacritics 2 makes them, as closely as PostgreSQL allows:
-- whole words, case- and accent-insensitive. unaccent is a trusted extension (PostgreSQL 13+), so
-- the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS unaccent;
--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION notestream_search (COPY = simple);
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION notestream_search
  ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart,
    email, url, host, url_path, file, sfloat, float, int, uint, version
  WITH unaccent, simple;
--> statement-breakpoint
-- The text as unicode61 splits and folds it, whatever the database's locale:
-- - every character that is not a letter, a digit or private use (punctuation, symbols, spaces,
--   emoji) becomes a space, one for one, so the parser sees plain words and never its compound
--   tokens (hosts, e-mail addresses, paths, URLs, signed numbers, hyphenated words, XML tags),
--   which would hide the words inside them;
-- - small letters by ICU's root locale where PostgreSQL has ICU (under LC_CTYPE C the parser's
--   own folding is ASCII's only: Greek or Cyrillic capitals would not find their small letters),
--   else by the database's; İ, the one letter whose small form is two characters, becomes I first.
-- Offsets are kept, so a snippet marked in this text maps back onto the original. Only the first
-- 200,000 characters are indexed: a tsvector holds at most 1 MB of distinct words, and a chunk or
-- body past it would make its write fail (SQLite indexes all of a text).
-- Only pg_catalog in the body, so the planner inlines it and it means the same under any
-- search_path (pg_dump's restore runs with an empty one).
DO $do$
DECLARE
  folded text := CASE WHEN EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu')
    THEN $e$lower(replace(left(t, 200000), 'İ', 'I') COLLATE "und-x-icu")$e$
    ELSE $e$lower(replace(left(t, 200000), 'İ', 'I'))$e$ END;
BEGIN
  EXECUTE format(
    $f$CREATE FUNCTION notestream_search_text(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $b$SELECT regexp_replace(%s, %L, ' ', 'g')$b$$f$,
    folded,
    '[\u0001-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u00A9\u00AB-\u00B1\u00B4\u00B6-\u00B8\u00BB\u00BF\u00D7\u00F7\u02C2-\u02C5\u02D2-\u02DF\u02E5-\u02EB\u02ED\u02EF-\u02FF\u0375\u037E\u0384-\u0385\u0387\u055A-\u055F\u0589-\u058A\u05BE\u05C0\u05C3\u05C6\u05F3-\u05F4\u0600-\u060F\u061B-\u061F\u066A-\u066D\u06D4\u0964-\u0965\u0970\u0E3F\u0E4F\u0E5A-\u0E5B\u10FB\u1360-\u1368\u166D-\u166E\u1680\u16EB-\u16ED\u17D4-\u17D6\u17D8-\u17DB\u1800-\u180A\u1FBD\u1FBF-\u1FC1\u1FCD-\u1FCF\u1FDD-\u1FDF\u1FED-\u1FEF\u1FFD-\u1FFE\u2000-\u206F\u207A-\u207E\u208A-\u208E\u20A0-\u20CF\u2190-\u245F\u249C-\u24E9\u2500-\u2775\u2794-\u2BFF\u2E00-\u2E2E\u2E30-\u2E7F\u2E80-\u2FFF\u3000-\u3004\u3008-\u3020\u3030\u3036-\u3037\u303D-\u303F\u309B-\u309C\u30A0\u30FB\u3190-\u3191\u3196-\u319F\u31C0-\u31E5\u3200-\u321E\u322A-\u3247\u3250\u3260-\u327F\u328A-\u32B0\u32C0-\u33FF\u4DC0-\u4DFF\uA490-\uA4C6\uFD3E-\uFD3F\uFE00-\uFE19\uFE30-\uFE6F\uFEFF\uFF01-\uFF0F\uFF1A-\uFF20\uFF3B-\uFF40\uFF5B-\uFF65\uFFE0-\uFFEE\uFFF9-\uFFFD\U0001F10D-\U0001FAFF]'
  );
END $do$;
--> statement-breakpoint
-- Streams: one entry per note_chunks row (one per batch of appends to a stream). A chunk's
-- workspace is its note's: queries join notes and ask for the caller's workspace.
CREATE INDEX "note_chunks_search" ON "note_chunks" USING gin (to_tsvector('notestream_search', notestream_search_text("text")));
--> statement-breakpoint
-- Every note's title (weight A) and an editable note's body (D; a rich note's plain text, never
-- its HTML). A title match ranks four times a body match, as on SQLite.
CREATE INDEX "notes_search" ON "notes" USING gin ((
  setweight(to_tsvector('notestream_search', notestream_search_text("title")), 'A')
  || setweight(to_tsvector('notestream_search', notestream_search_text(coalesce("body", ''))), 'D')
));
