ALTER TABLE `notes` ADD `run_started_at` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `last_run_ms` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `max_run_seconds` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `alert_webhook` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `notes_run_started` ON `notes` (`run_started_at`) WHERE run_started_at IS NOT NULL;