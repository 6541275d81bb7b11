-- The fixed flood-control window of 0024 gave way to recent_sends (a sliding minute).
ALTER TABLE `notify_cursors` DROP COLUMN `window_start`;--> statement-breakpoint
ALTER TABLE `notify_cursors` DROP COLUMN `window_sent`;