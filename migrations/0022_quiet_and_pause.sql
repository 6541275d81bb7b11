-- Quiet and pause (src/modules/deadman/quiet.ts): quiet_until and maintenance windows hold a
-- spell's alert back; alert_owed_at says when the held-back alert is due, found by its index.
ALTER TABLE `notes` ADD `quiet_until` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `maintenance` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `alert_owed_at` integer;--> statement-breakpoint
CREATE INDEX `notes_alert_owed` ON `notes` (`alert_owed_at`);