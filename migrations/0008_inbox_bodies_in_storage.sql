-- Stored inbox bodies now count against their workspace's storage, from the moment they are stored
-- until they are pruned. Bodies stored before this release were never counted: count them now, so
-- that pruning them later gives back only what was added.
UPDATE `workspaces` SET `storage_used` = `storage_used` + (
	SELECT coalesce(sum(length(CAST(d.`body` AS BLOB))), 0)
	FROM `inbox_deliveries` d JOIN `notes` n ON n.`id` = d.`note_id`
	WHERE n.`workspace_id` = `workspaces`.`id`
);
