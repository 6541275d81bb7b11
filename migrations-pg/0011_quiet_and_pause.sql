-- Quiet and pause (src/modules/deadman/quiet.ts): quiet_until and maintenance windows hold a
-- spell's alert back; alert_owed_at says when the held-back alert is due, found by its index.
ALTER TABLE "notes" ADD COLUMN "quiet_until" bigint;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "maintenance" text;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "alert_owed_at" bigint;--> statement-breakpoint
CREATE INDEX "notes_alert_owed" ON "notes" USING btree ("alert_owed_at");