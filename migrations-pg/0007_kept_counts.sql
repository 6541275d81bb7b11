ALTER TABLE "workspaces" ADD COLUMN "plain_notes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "rich_notes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "stream_notes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "trashed_notes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "folders" ADD COLUMN "note_count" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- Usage and list totals kept on their rows (GET /account, and X-Total-Count of GET /notes, /trash
-- and /folders), so that reading them costs the same whatever a workspace holds; as on SQLite
-- (migrations/0018_kept_counts.sql), kept by triggers, so that every way a note comes, goes,
-- moves or changes state counts in its own statement. Appends to a stream change none of these
-- columns, so they fire none of these triggers.
UPDATE "workspaces" SET
  "plain_notes" = c.plain, "rich_notes" = c.rich, "stream_notes" = c.streams, "trashed_notes" = c.trashed
FROM (
  SELECT "workspace_id",
    count(*) FILTER (WHERE "trashed_at" IS NULL AND "format" = 'plain') AS plain,
    count(*) FILTER (WHERE "trashed_at" IS NULL AND "format" = 'rich') AS rich,
    count(*) FILTER (WHERE "trashed_at" IS NULL AND "kind" = 'stream') AS streams,
    count(*) FILTER (WHERE "trashed_at" IS NOT NULL) AS trashed
  FROM "notes" GROUP BY "workspace_id"
) AS c
WHERE c."workspace_id" = "workspaces"."id";
--> statement-breakpoint
UPDATE "folders" SET "note_count" = c.n
FROM (SELECT "folder_id", count(*) AS n FROM "notes" WHERE "trashed_at" IS NULL AND "folder_id" IS NOT NULL GROUP BY "folder_id") AS c
WHERE c."folder_id" = "folders"."id";
--> statement-breakpoint
CREATE FUNCTION notestream_workspace_note_counts() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "workspaces" SET
      "plain_notes" = "plain_notes" - (OLD."trashed_at" IS NULL AND OLD."format" = 'plain')::int,
      "rich_notes" = "rich_notes" - (OLD."trashed_at" IS NULL AND OLD."format" = 'rich')::int,
      "stream_notes" = "stream_notes" - (OLD."trashed_at" IS NULL AND OLD."kind" = 'stream')::int,
      "trashed_notes" = "trashed_notes" - (OLD."trashed_at" IS NOT NULL)::int
    WHERE "id" = OLD."workspace_id";
  END IF;
  IF TG_OP <> 'DELETE' THEN
    UPDATE "workspaces" SET
      "plain_notes" = "plain_notes" + (NEW."trashed_at" IS NULL AND NEW."format" = 'plain')::int,
      "rich_notes" = "rich_notes" + (NEW."trashed_at" IS NULL AND NEW."format" = 'rich')::int,
      "stream_notes" = "stream_notes" + (NEW."trashed_at" IS NULL AND NEW."kind" = 'stream')::int,
      "trashed_notes" = "trashed_notes" + (NEW."trashed_at" IS NOT NULL)::int
    WHERE "id" = NEW."workspace_id";
  END IF;
  RETURN NULL;
END
$f$;
--> statement-breakpoint
CREATE FUNCTION notestream_folder_note_counts() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD."trashed_at" IS NULL AND OLD."folder_id" IS NOT NULL THEN
    UPDATE "folders" SET "note_count" = "note_count" - 1 WHERE "id" = OLD."folder_id";
  END IF;
  IF TG_OP <> 'DELETE' AND NEW."trashed_at" IS NULL AND NEW."folder_id" IS NOT NULL THEN
    UPDATE "folders" SET "note_count" = "note_count" + 1 WHERE "id" = NEW."folder_id";
  END IF;
  RETURN NULL;
END
$f$;
--> statement-breakpoint
CREATE TRIGGER "notes_workspace_counts" AFTER INSERT OR DELETE ON "notes"
  FOR EACH ROW EXECUTE FUNCTION notestream_workspace_note_counts();
--> statement-breakpoint
-- Saves that change none of what is counted (an edit, a webhook, a stream's size) leave the rows alone.
CREATE TRIGGER "notes_workspace_counts_update" AFTER UPDATE OF "trashed_at", "format", "kind", "workspace_id" ON "notes"
  FOR EACH ROW WHEN ((OLD."trashed_at" IS NULL) IS DISTINCT FROM (NEW."trashed_at" IS NULL) OR OLD."format" IS DISTINCT FROM NEW."format"
    OR OLD."kind" IS DISTINCT FROM NEW."kind" OR OLD."workspace_id" IS DISTINCT FROM NEW."workspace_id")
  EXECUTE FUNCTION notestream_workspace_note_counts();
--> statement-breakpoint
CREATE TRIGGER "notes_folder_counts_insert" AFTER INSERT ON "notes"
  FOR EACH ROW WHEN (NEW."folder_id" IS NOT NULL AND NEW."trashed_at" IS NULL) EXECUTE FUNCTION notestream_folder_note_counts();
--> statement-breakpoint
CREATE TRIGGER "notes_folder_counts_delete" AFTER DELETE ON "notes"
  FOR EACH ROW WHEN (OLD."folder_id" IS NOT NULL AND OLD."trashed_at" IS NULL) EXECUTE FUNCTION notestream_folder_note_counts();
--> statement-breakpoint
CREATE TRIGGER "notes_folder_counts_update" AFTER UPDATE OF "trashed_at", "folder_id" ON "notes"
  FOR EACH ROW WHEN ((OLD."trashed_at" IS NULL) IS DISTINCT FROM (NEW."trashed_at" IS NULL) OR OLD."folder_id" IS DISTINCT FROM NEW."folder_id")
  EXECUTE FUNCTION notestream_folder_note_counts();
