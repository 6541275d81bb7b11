-- Lines to channels (src/modules/channels/lines.ts): when the job sending a stream's pending lines to a
-- channel is due, and the times of the last minute's messages, for flood control.
ALTER TABLE "notify_cursors" ADD COLUMN "scheduled_at" bigint;--> statement-breakpoint
ALTER TABLE "notify_cursors" ADD COLUMN "recent_sends" text DEFAULT '[]' NOT NULL;