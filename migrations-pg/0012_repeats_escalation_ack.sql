-- Repeats, escalation and acknowledgement (src/modules/deadman/spell.ts, ack.ts): the settings, a
-- spell's bookkeeping with next_alert_at found by its index, and the alert mails' ack links.
CREATE TABLE "ack_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"note_id" text NOT NULL,
	"spell_started_at" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "repeat_alert_seconds" integer;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "escalate_after_seconds" integer;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "escalate_to" text;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "spell_started_at" bigint;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "alerted_at" bigint;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "alert_repeats" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "escalated_at" bigint;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "acknowledged_at" bigint;--> statement-breakpoint
ALTER TABLE "notes" ADD COLUMN "next_alert_at" bigint;--> statement-breakpoint
ALTER TABLE "ack_links" ADD CONSTRAINT "ack_links_note_id_notes_id_fk" FOREIGN KEY ("note_id") REFERENCES "public"."notes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ack_links_created" ON "ack_links" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "notes_next_alert" ON "notes" USING btree ("next_alert_at") WHERE next_alert_at IS NOT NULL;