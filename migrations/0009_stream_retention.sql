ALTER TABLE `note_chunks` ADD `at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `retention` text DEFAULT 'reject' NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `retention_days` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `full_since` integer;--> statement-breakpoint
-- Chunks written before this release have no time: their note's last write is the latest they can
-- be, so retention by age never drops a line earlier than it should.
UPDATE `note_chunks` SET `at` = (SELECT `last_write_at` FROM `notes` WHERE `notes`.`id` = `note_chunks`.`note_id`);
