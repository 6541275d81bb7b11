-- Repeats, escalation and acknowledgement (src/modules/deadman/spell.ts, ack.ts): the settings, a
-- spell's bookkeeping with next_alert_at found by its index, and the alert mails' ack links.
CREATE TABLE `ack_links` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`note_id` text NOT NULL,
	`spell_started_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ack_links_created` ON `ack_links` (`created_at`);--> statement-breakpoint
ALTER TABLE `notes` ADD `repeat_alert_seconds` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `escalate_after_seconds` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `escalate_to` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `spell_started_at` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `alerted_at` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `alert_repeats` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `escalated_at` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `acknowledged_at` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `next_alert_at` integer;--> statement-breakpoint
CREATE INDEX `notes_next_alert` ON `notes` (`next_alert_at`) WHERE next_alert_at IS NOT NULL;