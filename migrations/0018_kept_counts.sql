ALTER TABLE `workspaces` ADD `plain_notes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `rich_notes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `stream_notes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `trashed_notes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `folders` ADD `note_count` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- Usage and list totals kept on their rows (GET /account, and X-Total-Count of GET /notes, /trash
-- and /folders), so that reading them costs the same whatever a workspace holds: notes outside
-- the trash by format and the streams among them, notes in the trash, a folder's notes outside
-- the trash. Kept by triggers, like the search index (0013): every way a note comes, goes, moves
-- or changes state (a create, a first append, a bulk, the trash, a restore, a purge, a deleted
-- folder or workspace) counts in its own statement, and no code path can forget it. Appends to a
-- stream change none of these columns, so they fire none of these triggers.
UPDATE `workspaces` SET
  `plain_notes` = c.`plain`, `rich_notes` = c.`rich`, `stream_notes` = c.`streams`, `trashed_notes` = c.`trashed`
FROM (
  SELECT `workspace_id`,
    sum(`trashed_at` IS NULL AND `format` = 'plain') AS `plain`,
    sum(`trashed_at` IS NULL AND `format` = 'rich') AS `rich`,
    sum(`trashed_at` IS NULL AND `kind` = 'stream') AS `streams`,
    sum(`trashed_at` IS NOT NULL) AS `trashed`
  FROM `notes` GROUP BY `workspace_id`
) AS c
WHERE c.`workspace_id` = `workspaces`.`id`;
--> statement-breakpoint
UPDATE `folders` SET `note_count` = c.`n`
FROM (SELECT `folder_id`, count(*) AS `n` FROM `notes` WHERE `trashed_at` IS NULL AND `folder_id` IS NOT NULL GROUP BY `folder_id`) AS c
WHERE c.`folder_id` = `folders`.`id`;
--> statement-breakpoint
CREATE TRIGGER `note_counts_insert` AFTER INSERT ON `notes` BEGIN
  UPDATE `workspaces` SET
    `plain_notes` = `plain_notes` + (new.`trashed_at` IS NULL AND new.`format` = 'plain'),
    `rich_notes` = `rich_notes` + (new.`trashed_at` IS NULL AND new.`format` = 'rich'),
    `stream_notes` = `stream_notes` + (new.`trashed_at` IS NULL AND new.`kind` = 'stream'),
    `trashed_notes` = `trashed_notes` + (new.`trashed_at` IS NOT NULL)
  WHERE `id` = new.`workspace_id`;
  UPDATE `folders` SET `note_count` = `note_count` + 1 WHERE `id` = new.`folder_id` AND new.`trashed_at` IS NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `note_counts_delete` AFTER DELETE ON `notes` BEGIN
  UPDATE `workspaces` SET
    `plain_notes` = `plain_notes` - (old.`trashed_at` IS NULL AND old.`format` = 'plain'),
    `rich_notes` = `rich_notes` - (old.`trashed_at` IS NULL AND old.`format` = 'rich'),
    `stream_notes` = `stream_notes` - (old.`trashed_at` IS NULL AND old.`kind` = 'stream'),
    `trashed_notes` = `trashed_notes` - (old.`trashed_at` IS NOT NULL)
  WHERE `id` = old.`workspace_id`;
  UPDATE `folders` SET `note_count` = `note_count` - 1 WHERE `id` = old.`folder_id` AND old.`trashed_at` IS NULL;
END;
--> statement-breakpoint
-- Saves that change none of what is counted (an edit, a webhook, a stream's size) leave the rows alone.
CREATE TRIGGER `note_counts_update` AFTER UPDATE OF `trashed_at`, `format`, `kind`, `workspace_id` ON `notes`
WHEN (old.`trashed_at` IS NULL) IS NOT (new.`trashed_at` IS NULL) OR old.`format` IS NOT new.`format`
  OR old.`kind` IS NOT new.`kind` OR old.`workspace_id` IS NOT new.`workspace_id` BEGIN
  UPDATE `workspaces` SET
    `plain_notes` = `plain_notes` - (old.`trashed_at` IS NULL AND old.`format` = 'plain'),
    `rich_notes` = `rich_notes` - (old.`trashed_at` IS NULL AND old.`format` = 'rich'),
    `stream_notes` = `stream_notes` - (old.`trashed_at` IS NULL AND old.`kind` = 'stream'),
    `trashed_notes` = `trashed_notes` - (old.`trashed_at` IS NOT NULL)
  WHERE `id` = old.`workspace_id`;
  UPDATE `workspaces` SET
    `plain_notes` = `plain_notes` + (new.`trashed_at` IS NULL AND new.`format` = 'plain'),
    `rich_notes` = `rich_notes` + (new.`trashed_at` IS NULL AND new.`format` = 'rich'),
    `stream_notes` = `stream_notes` + (new.`trashed_at` IS NULL AND new.`kind` = 'stream'),
    `trashed_notes` = `trashed_notes` + (new.`trashed_at` IS NOT NULL)
  WHERE `id` = new.`workspace_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `note_counts_folder` AFTER UPDATE OF `trashed_at`, `folder_id` ON `notes`
WHEN (old.`trashed_at` IS NULL) IS NOT (new.`trashed_at` IS NULL) OR old.`folder_id` IS NOT new.`folder_id` BEGIN
  UPDATE `folders` SET `note_count` = `note_count` - 1 WHERE `id` = old.`folder_id` AND old.`trashed_at` IS NULL;
  UPDATE `folders` SET `note_count` = `note_count` + 1 WHERE `id` = new.`folder_id` AND new.`trashed_at` IS NULL;
END;
