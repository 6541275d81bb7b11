import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";
import { byteCount, ms, rowId } from "./types";

// The PostgreSQL twin of src/db/schema/notes.ts.
//
// Full-text search is not here: drizzle-kit cannot express it. On SQLite it is migration 0013's
// FTS5 tables (0019: chunks filled by the search indexer); on PostgreSQL, stored tsvector columns
// (search_vector) of the notes' titles and bodies (generated) and of note_chunks.text (set by the
// search indexer after the append's commit, NULL until then), with GIN indexes over them
// (migrations-pg/0002_search.sql, 0005_search_vectors.sql, 0008_search_behind_commit.sql). The
// queries of both are in src/modules/search/ (sqlite.ts, postgres.ts, indexer.ts).

export const folders = pgTable(
  "folders",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    nameKey: text("name_key").notNull(),
    noteCount: integer("note_count").notNull().default(0),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [uniqueIndex("folders_workspace_name").on(t.workspaceId, t.nameKey)],
);

export const notes = pgTable(
  "notes",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["stream", "editable"] }).notNull(),
    format: text("format", { enum: ["plain", "rich"] }).notNull(),
    filename: text("filename"),
    title: text("title").notNull(),
    folderId: text("folder_id").references(() => folders.id, { onDelete: "set null" }),
    body: text("body"),
    richHtml: text("rich_html"),
    byteSize: byteCount("byte_size").notNull().default(0),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
    lastWriteAt: ms("last_write_at").notNull(),
    trashedAt: ms("trashed_at"),
    trashedFilename: text("trashed_filename"),
    webhookUrl: text("webhook_url"),
    webhookFormat: text("webhook_format", { enum: ["generic", "slack", "discord", "teams", "google_chat", "mattermost"] })
      .notNull()
      .default("generic"),
    webhookSecret: text("webhook_secret"),
    webhookStatus: text("webhook_status", { enum: ["none", "enabled", "disabled"] }).notNull().default("none"),
    webhookFailures: integer("webhook_failures").notNull().default(0),
    inboxTokenHash: text("inbox_token_hash"),
    // Status badge: SHA-256 of the token inside the badge URLs (modules/badges).
    badgeTokenHash: text("badge_token_hash"),
    expectedIntervalSeconds: integer("expected_interval_seconds"),
    alertEmail: text("alert_email"),
    deadmanStatus: text("deadman_status", { enum: ["off", "ok", "late", "failing", "paused"] }).notNull().default("off"),
    deadmanDueAt: ms("deadman_due_at"),
    schedule: text("schedule"),
    timezone: text("timezone").notNull().default("UTC"),
    graceSeconds: integer("grace_seconds").notNull().default(300),
    // Quiet and maintenance (modules/deadman/quiet.ts): no alert before quiet_until (ms) nor inside
    // a window (JSON: [{schedule, timezone, duration_seconds}]); a spell's alert held back is owed
    // from alert_owed_at, when a second indexed sweep sends it if the spell is still on.
    quietUntil: ms("quiet_until"),
    maintenance: text("maintenance"),
    alertOwedAt: ms("alert_owed_at"),
    repeatAlertSeconds: integer("repeat_alert_seconds"),
    escalateAfterSeconds: integer("escalate_after_seconds"),
    escalateTo: text("escalate_to"),
    notify: text("notify"),
    rules: text("rules"),
    inboxTemplate: text("inbox_template"),
    spellStartedAt: ms("spell_started_at"),
    alertedAt: ms("alerted_at"),
    alertRepeats: integer("alert_repeats").notNull().default(0),
    escalatedAt: ms("escalated_at"),
    acknowledgedAt: ms("acknowledged_at"),
    nextAlertAt: ms("next_alert_at"),
    runStartedAt: ms("run_started_at"),
    // A run's length in ms: integer would end at 24.8 days.
    lastRunMs: bigint("last_run_ms", { mode: "number" }),
    maxRunSeconds: integer("max_run_seconds"),
    alertWebhook: boolean("alert_webhook").notNull().default(false),
    retention: text("retention", { enum: ["reject", "drop_oldest"] }).notNull().default("reject"),
    retentionDays: integer("retention_days"),
    fullSince: ms("full_since"),
  },
  (t) => [
    // NULL filenames (editable notes) never collide here either: PostgreSQL's unique indexes
    // treat NULLs as distinct by default, as SQLite's do.
    uniqueIndex("notes_workspace_filename").on(t.workspaceId, t.filename),
    index("notes_workspace_updated").on(t.workspaceId, t.updatedAt),
    index("notes_workspace_folder").on(t.workspaceId, t.folderId),
    index("notes_workspace_format").on(t.workspaceId, t.format),
    uniqueIndex("notes_inbox_token").on(t.inboxTokenHash),
    uniqueIndex("notes_badge_token").on(t.badgeTokenHash),
    index("notes_deadman_due").on(t.deadmanStatus, t.deadmanDueAt),
    index("notes_alert_owed").on(t.alertOwedAt),
    index("notes_next_alert").on(t.nextAlertAt).where(sql`next_alert_at IS NOT NULL`),
    index("notes_run_started").on(t.runStartedAt).where(sql`run_started_at IS NOT NULL`),
    index("notes_trashed").on(t.trashedAt).where(sql`trashed_at IS NOT NULL`),
    index("notes_retention_days").on(t.retentionDays).where(sql`retention_days IS NOT NULL`),
  ],
);

export const noteChunks = pgTable(
  "note_chunks",
  {
    // SQLite's one writer makes seq append order. An identity is handed out at insert, not at
    // commit: two transactions appending to one stream at once could commit out of seq order,
    // so PostgreSQL's appends must take the stream's row lock first (SELECT … FOR UPDATE).
    seq: rowId("seq"),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    text: text("text").notNull(),
    at: ms("at").notNull().default(0),
  },
  // By seq: a stream's lines in order. By at: what streams wrote in a time window (digests), read
  // without going through every chunk of each stream.
  (t) => [index("note_chunks_note").on(t.noteId, t.seq), index("note_chunks_note_at").on(t.noteId, t.at)],
);

export const snapshots = pgTable(
  "snapshots",
  {
    id: text("id").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    body: text("body").notNull(),
    richHtml: text("rich_html"),
    byteSize: byteCount("byte_size").notNull(),
    createdAt: ms("created_at").notNull(),
    lastSaveAt: ms("last_save_at").notNull(),
  },
  (t) => [index("snapshots_note").on(t.noteId, t.createdAt)],
);

export const ackLinks = pgTable(
  "ack_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    spellStartedAt: ms("spell_started_at").notNull(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("ack_links_created").on(t.createdAt)],
);
