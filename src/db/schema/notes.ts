import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { workspaces } from "./accounts";

export const folders = sqliteTable(
  "folders",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // Lower-cased name: folder names are unique per workspace without regard to case.
    nameKey: text("name_key").notNull(),
    // Its notes outside the trash, kept by triggers on notes like the workspace's counts.
    noteCount: integer("note_count").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("folders_workspace_name").on(t.workspaceId, t.nameKey)],
);

/**
 * Notes. An editable note keeps its body in `body`; a stream keeps its text in `note_chunks`
 * so that an append is one insert, whatever the note's size.
 */
export const notes = sqliteTable(
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
    byteSize: integer("byte_size").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    lastWriteAt: integer("last_write_at").notNull(),
    // Trashed notes are invisible and count against no cap; a trashed stream gives up its
    // filename (kept in trashed_filename) so the name can be used again.
    trashedAt: integer("trashed_at"),
    trashedFilename: text("trashed_filename"),
    // Outbound webhook of a stream: one signed delivery per append.
    webhookUrl: text("webhook_url"),
    webhookFormat: text("webhook_format", { enum: ["generic", "slack", "discord", "teams", "google_chat", "mattermost"] })
      .notNull()
      .default("generic"),
    webhookSecret: text("webhook_secret"),
    webhookStatus: text("webhook_status", { enum: ["none", "enabled", "disabled"] }).notNull().default("none"),
    // Consecutive failed delivery attempts; ten disable the webhook, a success resets it.
    webhookFailures: integer("webhook_failures").notNull().default(0),
    // Inbound inbox: SHA-256 of the token inside the inbox URL.
    inboxTokenHash: text("inbox_token_hash"),
    // Status badge: SHA-256 of the token inside the badge URLs (modules/badges).
    badgeTokenHash: text("badge_token_hash"),
    // Dead-man's switch: the deadline lives here, so a restart forgets nothing.
    expectedIntervalSeconds: integer("expected_interval_seconds"),
    alertEmail: text("alert_email"),
    deadmanStatus: text("deadman_status", { enum: ["off", "ok", "late", "failing", "paused"] }).notNull().default("off"),
    deadmanDueAt: integer("deadman_due_at"),
    // A cron schedule instead of the interval (never both): due at its first time after the last
    // write, in its time zone, plus the grace.
    schedule: text("schedule"),
    timezone: text("timezone").notNull().default("UTC"),
    graceSeconds: integer("grace_seconds").notNull().default(300),
    // Quiet and maintenance (modules/deadman/quiet.ts, pause.ts): no alert before quiet_until (ms) nor inside
    // a window (JSON: [{schedule, timezone, duration_seconds}]); a spell's alert held back is owed
    // from alert_owed_at, when a second indexed sweep sends it if the spell is still on.
    quietUntil: integer("quiet_until"),
    maintenance: text("maintenance"),
    alertOwedAt: integer("alert_owed_at"),
    // Repeats and escalation (modules/deadman/spell.ts): while a spell (late or failing) is on, the
    // alert repeats every repeat_alert_seconds (at most 24 times) and goes to escalate_to once after
    // escalate_after_seconds, unless acknowledged. The spell's bookkeeping: when it started, when
    // its last alert went out, how many repeats, when it escalated, and when the next of those is
    // due (next_alert_at, found by its index).
    repeatAlertSeconds: integer("repeat_alert_seconds"),
    escalateAfterSeconds: integer("escalate_after_seconds"),
    escalateTo: text("escalate_to"),
    // Where alerts and lines go (issue 35): notify (JSON: [{channel_id, events, batch_seconds}]),
    // rules on lines (JSON: [{match, regex, case_sensitive, then}]), and the inbox's line template.
    notify: text("notify"),
    rules: text("rules"),
    inboxTemplate: text("inbox_template"),
    spellStartedAt: integer("spell_started_at"),
    alertedAt: integer("alerted_at"),
    alertRepeats: integer("alert_repeats").notNull().default(0),
    escalatedAt: integer("escalated_at"),
    acknowledgedAt: integer("acknowledged_at"),
    nextAlertAt: integer("next_alert_at"),
    // Signals (status on appends): a run that started and has not reported, how long the last
    // one took, how long one may take, and whether alerts also go to the stream's webhook.
    runStartedAt: integer("run_started_at"),
    lastRunMs: integer("last_run_ms"),
    maxRunSeconds: integer("max_run_seconds"),
    alertWebhook: integer("alert_webhook", { mode: "boolean" }).notNull().default(false),
    // Retention of a stream at its size cap: reject appends (the default), or drop the oldest
    // lines; and optionally drop lines older than retention_days.
    retention: text("retention", { enum: ["reject", "drop_oldest"] }).notNull().default("reject"),
    retentionDays: integer("retention_days"),
    // Since when a `reject` stream refuses appends for being full (null: not full); the
    // full-stream mail goes once per spell.
    fullSince: integer("full_since"),
  },
  (t) => [
    // NULL filenames (editable notes) never collide in a SQLite unique index.
    uniqueIndex("notes_workspace_filename").on(t.workspaceId, t.filename),
    index("notes_workspace_updated").on(t.workspaceId, t.updatedAt),
    index("notes_workspace_folder").on(t.workspaceId, t.folderId),
    index("notes_workspace_format").on(t.workspaceId, t.format),
    uniqueIndex("notes_inbox_token").on(t.inboxTokenHash),
    uniqueIndex("notes_badge_token").on(t.badgeTokenHash),
    index("notes_deadman_due").on(t.deadmanStatus, t.deadmanDueAt),
    index("notes_alert_owed").on(t.alertOwedAt),
    index("notes_next_alert").on(t.nextAlertAt).where(sql`next_alert_at IS NOT NULL`),
    // The overdue-run check visits only streams with a run under way.
    index("notes_run_started").on(t.runStartedAt).where(sql`run_started_at IS NOT NULL`),
    // The hourly purge finds trashed notes without scanning every note.
    index("notes_trashed").on(t.trashedAt).where(sql`trashed_at IS NOT NULL`),
    // The retention task visits only the streams that set a number of days.
    index("notes_retention_days").on(t.retentionDays).where(sql`retention_days IS NOT NULL`),
  ],
);

/** Appended text of streams, in order of `seq` (the rowid). Reading concatenates them. */
export const noteChunks = sqliteTable(
  "note_chunks",
  {
    // The rowid: a new row always gets max+1, so order within a note is append order.
    seq: integer("seq").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    text: text("text").notNull(),
    // When the chunk's lines were appended (a batch's lines to one stream share a chunk and a time).
    at: integer("at").notNull().default(0),
  },
  // By seq: a stream's lines in order. By at: what streams wrote in a time window (digests), read
  // without going through every chunk of each stream.
  (t) => [index("note_chunks_note").on(t.noteId, t.seq), index("note_chunks_note_at").on(t.noteId, t.at)],
);

/** Earlier versions of editable notes, at most five per note. */
export const snapshots = sqliteTable(
  "snapshots",
  {
    id: text("id").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    body: text("body").notNull(),
    richHtml: text("rich_html"),
    byteSize: integer("byte_size").notNull(),
    createdAt: integer("created_at").notNull(),
    // Saves within ten minutes of the previous one share this snapshot.
    lastSaveAt: integer("last_save_at").notNull(),
  },
  (t) => [index("snapshots_note").on(t.noteId, t.createdAt)],
);

/**
 * The acknowledge links of alert mails (/ack/{token}): one per mail, kept as the token's SHA-256,
 * naming the spell it was sent for; a link of an ended spell acknowledges nothing.
 */
export const ackLinks = sqliteTable(
  "ack_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    spellStartedAt: integer("spell_started_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("ack_links_created").on(t.createdAt)],
);
