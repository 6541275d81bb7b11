-- Cron schedules on streams (src/modules/deadman/schedule.ts): a stream is watched by its
-- expected_interval_seconds or by a schedule in a time zone with a grace, never both. The
-- deadline stays in deadman_due_at, so the sweep and its index are unchanged.
ALTER TABLE `notes` ADD `schedule` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `timezone` text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `grace_seconds` integer DEFAULT 300 NOT NULL;