CREATE INDEX `notes_trashed` ON `notes` (`trashed_at`) WHERE trashed_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `notes_retention_days` ON `notes` (`retention_days`) WHERE retention_days IS NOT NULL;--> statement-breakpoint
-- Trashed notes now count against storage until they are purged (then their bytes are freed).
-- Earlier releases took a note's bytes off when it was trashed: add them back, so that the purge
-- frees them once and a subscription that restores them does not count them twice.
UPDATE `workspaces` SET `storage_used` = `storage_used` + (
	SELECT coalesce(sum(`byte_size`), 0) FROM `notes`
	WHERE `notes`.`workspace_id` = `workspaces`.`id` AND `notes`.`trashed_at` IS NOT NULL
);
