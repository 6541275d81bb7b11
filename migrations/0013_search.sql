-- Full-text search of note contents (SQLite FTS5), kept in step by triggers, so every way text
-- changes (appends, edits, snapshot restores, retention, purges, cascades from a deleted
-- workspace) updates the index in the same transaction, and no code path can forget it.
-- Outside the drizzle schema: drizzle-kit cannot express virtual tables, views or triggers.
--
-- Tokenizer: unicode61 with remove_diacritics 2 (whole words, case- and accent-insensitive).
-- Trigram would find substrings too, but measured on log lines its index was 2.6 times the text
-- (unicode61: 0.4 times) and it took two to six times longer to index (docs/PERFORMANCE.md).
--
-- Both tables index `ws`, the hex of the note's workspace id, and every query asks for it, so a
-- search reads the postings of its own workspace, not every tenant's.
--
-- Streams: one row per note_chunks row (one per batch of appends to a stream), external content
-- read through the view, so the text is stored once. Trimming a stream's head deletes chunk rows
-- and with them their index rows.
CREATE VIEW `search_chunk_content` AS
  SELECT c.`seq` AS `seq`, c.`text` AS `text`, hex(n.`workspace_id`) AS `ws`
  FROM `note_chunks` c JOIN `notes` n ON n.`id` = c.`note_id`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `search_chunks` USING fts5(
  `text`, `ws`,
  content = 'search_chunk_content', content_rowid = 'seq',
  tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
-- Every note's title, and an editable note's body (a rich note's plain text, never its HTML).
-- It keeps its own copy: notes has no integer key that VACUUM (and so `notestream backup`)
-- keeps stable. `note_key`, the hex of the id, finds a note's row through the index.
CREATE VIRTUAL TABLE `search_notes` USING fts5(
  `title`, `body`, `note_id` UNINDEXED, `note_key`, `ws`,
  tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `search_chunk_insert` AFTER INSERT ON `note_chunks` BEGIN
  INSERT INTO `search_chunks` (rowid, `text`, `ws`)
  VALUES (new.`seq`, new.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = new.`note_id`));
END;
--> statement-breakpoint
-- An external-content delete must repeat exactly what was indexed. A chunk deleted by the cascade
-- from its note finds no note any more: the note's own trigger (before its delete) has removed it.
CREATE TRIGGER `search_chunk_delete` AFTER DELETE ON `note_chunks`
WHEN EXISTS (SELECT 1 FROM `notes` WHERE `id` = old.`note_id`) BEGIN
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  VALUES ('delete', old.`seq`, old.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = old.`note_id`));
END;
--> statement-breakpoint
CREATE TRIGGER `search_chunk_update` AFTER UPDATE OF `text`, `note_id` ON `note_chunks` BEGIN
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  VALUES ('delete', old.`seq`, old.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = old.`note_id`));
  INSERT INTO `search_chunks` (rowid, `text`, `ws`)
  VALUES (new.`seq`, new.`text`, (SELECT hex(`workspace_id`) FROM `notes` WHERE `id` = new.`note_id`));
END;
--> statement-breakpoint
CREATE TRIGGER `search_note_insert` AFTER INSERT ON `notes` BEGIN
  INSERT INTO `search_notes` (`title`, `body`, `note_id`, `note_key`, `ws`)
  VALUES (new.`title`, new.`body`, new.`id`, hex(new.`id`), hex(new.`workspace_id`));
END;
--> statement-breakpoint
-- Saves that change neither title nor body (a move, a webhook, a counter) leave the index alone.
CREATE TRIGGER `search_note_update` AFTER UPDATE OF `title`, `body` ON `notes`
WHEN old.`title` IS NOT new.`title` OR old.`body` IS NOT new.`body` BEGIN
  UPDATE `search_notes` SET `title` = new.`title`, `body` = new.`body`
  WHERE rowid IN (SELECT rowid FROM `search_notes` WHERE `search_notes` MATCH 'note_key : "' || hex(new.`id`) || '"');
END;
--> statement-breakpoint
CREATE TRIGGER `search_note_workspace` AFTER UPDATE OF `workspace_id` ON `notes`
WHEN old.`workspace_id` IS NOT new.`workspace_id` BEGIN
  UPDATE `search_notes` SET `ws` = hex(new.`workspace_id`)
  WHERE rowid IN (SELECT rowid FROM `search_notes` WHERE `search_notes` MATCH 'note_key : "' || hex(new.`id`) || '"');
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  SELECT 'delete', `seq`, `text`, hex(old.`workspace_id`) FROM `note_chunks` WHERE `note_id` = new.`id`;
  INSERT INTO `search_chunks` (rowid, `text`, `ws`)
  SELECT `seq`, `text`, hex(new.`workspace_id`) FROM `note_chunks` WHERE `note_id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `search_note_before_delete` BEFORE DELETE ON `notes` BEGIN
  INSERT INTO `search_chunks` (`search_chunks`, rowid, `text`, `ws`)
  SELECT 'delete', `seq`, `text`, hex(old.`workspace_id`) FROM `note_chunks` WHERE `note_id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `search_note_delete` AFTER DELETE ON `notes` BEGIN
  DELETE FROM `search_notes`
  WHERE rowid IN (SELECT rowid FROM `search_notes` WHERE `search_notes` MATCH 'note_key : "' || hex(old.`id`) || '"');
END;
--> statement-breakpoint
-- A database of the previous release: everything already written is indexed now.
INSERT INTO `search_notes` (`title`, `body`, `note_id`, `note_key`, `ws`)
  SELECT `title`, `body`, `id`, hex(`id`), hex(`workspace_id`) FROM `notes`;
--> statement-breakpoint
INSERT INTO `search_chunks` (`search_chunks`) VALUES ('rebuild');
