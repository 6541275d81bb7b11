-- Rate-limit windows counted across every instance sharing the database (src/http/rate-limit-pg.ts):
-- one row per key and fixed window, upserted per request. UNLOGGED: no WAL and not replicated, and
-- emptied by a crash; a counter lives a minute (an hour for a few browser limits), which a crash may
-- as well forget. Outside the drizzle schema: drizzle-kit cannot say UNLOGGED, and SQLite counts in
-- memory (its database has one server).
CREATE UNLOGGED TABLE IF NOT EXISTS "rate_windows" (
  "key" text NOT NULL,
  "window_start" bigint NOT NULL,
  "expires_at" bigint NOT NULL,
  "count" integer NOT NULL,
  PRIMARY KEY ("key", "window_start")
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "rate_windows_expires" ON "rate_windows" ("expires_at");
