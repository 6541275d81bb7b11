-- Status badges (src/modules/badges): the SHA-256 of the token inside a stream's badge URLs;
-- the unique index is how GET /badge/{token} finds its stream.
ALTER TABLE "notes" ADD COLUMN "badge_token_hash" text;--> statement-breakpoint
CREATE UNIQUE INDEX "notes_badge_token" ON "notes" USING btree ("badge_token_hash");