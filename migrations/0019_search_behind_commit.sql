-- Stream chunks are indexed behind the append's commit, in batches, by the search indexer
-- (src/modules/search/indexer.ts), instead of by a trigger inside every append's transaction:
-- FTS5 writes a segment per transaction, so indexing a batch of appends' chunks at once costs a
-- fraction of what each append paid. The append's own transaction records nothing more: a chunk
-- is indexed once its seq is at most `through`, the indexer's durable watermark, raised in the
-- same transaction as the index rows it wrote, so a crash between an append and its indexing
-- loses nothing (the next pass, at start-up too, takes every chunk above it).
--
-- note_chunks.seq has no AUTOINCREMENT: after the newest chunks are deleted (a purge, a trim),
-- the next chunk takes max(seq) + 1 again, which may be at or below the watermark. Such a chunk
-- is indexed at once, by the trigger below, as every chunk was before.
--
-- An external-content delete must repeat exactly what was indexed, so every trigger that
-- removes index rows touches only the chunks at or below the watermark, and the content view
-- shows only those (FTS5's integrity-check compares the index with it).
--
-- Titles and bodies (search_notes) are not on the append path and stay indexed by their triggers.
CREATE TABLE `search_chunks_indexed` (`through` integer NOT NULL);
--> statement-breakpoint
-- A database of the previous release: every chunk it holds is indexed already.
INSERT INTO `search_chunks_indexed` (`through`) SELECT coalesce(max(`seq`), 0) FROM `note_chunks`;
--> statement-breakpoint
DROP VIEW `search_chunk_content`;
--> statement-breakpoint
CREATE VIEW `search_chunk_content` AS
  SELECT c.`seq` AS `seq`, c.`text` AS `text`, hex(n.`workspace_id`) AS `ws`
  FROM `note_chunks` c JOIN `notes` n ON n.`id` = c.`note_id`
  WHERE c.`seq` <= (SELECT `through` FROM `search_chunks_indexed`);
--> statement-breakpoint
DROP TRIGGER `search_chunk_insert`;
--> statement-breakpoint
CREATE TRIGGER `search_chunk_insert` AFTER INSERT ON `note_chunks`
WHEN new.`seq` <= (SELECT `through` FROM `search_chunks_indexed`) BEGIN
  INSERT INTO `search_chunks` (rowid, `text`, `ws`)
  VALUES (new.`seq`, new.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = new.`note_id`));
END;
--> statement-breakpoint
DROP TRIGGER `search_chunk_delete`;
--> statement-breakpoint
-- A chunk deleted by the cascade from its note finds no note any more: the note's own trigger
-- (before its delete) has removed it.
CREATE TRIGGER `search_chunk_delete` AFTER DELETE ON `note_chunks`
WHEN old.`seq` <= (SELECT `through` FROM `search_chunks_indexed`) AND EXISTS (SELECT 1 FROM `notes` WHERE `id` = old.`note_id`) BEGIN
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  VALUES ('delete', old.`seq`, old.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = old.`note_id`));
END;
--> statement-breakpoint
DROP TRIGGER `search_chunk_update`;
--> statement-breakpoint
CREATE TRIGGER `search_chunk_update` AFTER UPDATE OF `text`, `note_id` ON `note_chunks`
WHEN old.`seq` <= (SELECT `through` FROM `search_chunks_indexed`) BEGIN
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  VALUES ('delete', old.`seq`, old.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = old.`note_id`));
  INSERT INTO `search_chunks` (rowid, `text`, `ws`)
  VALUES (new.`seq`, new.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = new.`note_id`));
END;
--> statement-breakpoint
DROP TRIGGER `search_note_workspace`;
--> statement-breakpoint
CREATE TRIGGER `search_note_workspace` AFTER UPDATE OF `workspace_id` ON `notes`
WHEN old.`workspace_id` IS NOT new.`workspace_id` BEGIN
  UPDATE `search_notes` SET `ws` = hex(new.`workspace_id`)
  WHERE rowid IN (SELECT rowid FROM `search_notes` WHERE `search_notes` MATCH 'note_key : "' || hex(new.`id`) || '"');
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  SELECT 'delete', `seq`, `text`, hex(old.`workspace_id`) FROM `note_chunks`
  WHERE `note_id` = new.`id` AND `seq` <= (SELECT `through` FROM `search_chunks_indexed`);
  INSERT INTO `search_chunks` (rowid, `text`, `ws`)
  SELECT `seq`, `text`, hex(new.`workspace_id`) FROM `note_chunks`
  WHERE `note_id` = new.`id` AND `seq` <= (SELECT `through` FROM `search_chunks_indexed`);
END;
--> statement-breakpoint
DROP TRIGGER `search_note_before_delete`;
--> statement-breakpoint
CREATE TRIGGER `search_note_before_delete` BEFORE DELETE ON `notes` BEGIN
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  SELECT 'delete', `seq`, `text`, hex(old.`workspace_id`) FROM `note_chunks`
  WHERE `note_id` = old.`id` AND `seq` <= (SELECT `through` FROM `search_chunks_indexed`);
END;
