import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { workspaces } from "./accounts";
import { notes } from "./notes";

/**
 * Where alerts and lines go besides mail and a stream's own webhook (modules/channels): an
 * Apprise-style URL per channel, kept whole because delivering needs its secrets (the API shows it
 * masked). Ten consecutive failed deliveries disable it until a PATCH.
 */
export const channels = sqliteTable(
  "channels",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["mailto", "ntfy", "tgram", "pover", "gotify", "matrix", "webhook"] }).notNull(),
    url: text("url").notNull(),
    format: text("format", { enum: ["generic", "slack", "discord", "teams", "google_chat", "mattermost"] }).notNull().default("generic"),
    // Signs generic-format deliveries as a stream's webhook secret does.
    secret: text("secret"),
    status: text("status", { enum: ["enabled", "disabled"] }).notNull().default("enabled"),
    failures: integer("failures").notNull().default(0),
    lastError: text("last_error"),
    lastAttemptAt: integer("last_attempt_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("channels_workspace_name").on(t.workspaceId, t.name), index("channels_workspace_created").on(t.workspaceId, t.createdAt)],
);

/**
 * How far each stream's lines have gone to each channel that takes them (a stream's `notify`), and
 * what flood control needs (modules/channels/lines.ts).
 */
export const notifyCursors = sqliteTable(
  "notify_cursors",
  {
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    channelId: text("channel_id").notNull().references(() => channels.id, { onDelete: "cascade" }),
    throughSeq: integer("through_seq").notNull().default(0),
    // When the job that sends what is pending is due (null: none queued; an append queues one).
    scheduledAt: integer("scheduled_at"),
    // JSON: the times of the messages sent in the last minute, for flood control (at most 20 a minute).
    recentSends: text("recent_sends").notNull().default("[]"),
  },
  (t) => [primaryKey({ columns: [t.noteId, t.channelId] })],
);

/** Scheduled summaries of a workspace's streams, to a channel or an address (modules/digests). */
export const digests = sqliteTable(
  "digests",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    schedule: text("schedule").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    channelId: text("channel_id").references(() => channels.id, { onDelete: "cascade" }),
    email: text("email"),
    // JSON: "all", or an array of filenames.
    streams: text("streams").notNull().default('"all"'),
    lastLines: integer("last_lines").notNull().default(5),
    // What the next digest covers starts here; the sweep finds due digests by next_run_at.
    lastSentAt: integer("last_sent_at"),
    nextRunAt: integer("next_run_at").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("digests_next_run").on(t.nextRunAt), index("digests_workspace_created").on(t.workspaceId, t.createdAt)],
);

/** Every alert a stream raised (late, failing, full, hung run, rule, repeat, escalation, recovery): what digests count. */
export const alertLog = sqliteTable(
  "alert_log",
  {
    id: integer("id").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    at: integer("at").notNull(),
    kind: text("kind").notNull(),
    text: text("text").notNull(),
  },
  (t) => [index("alert_log_note_at").on(t.noteId, t.at), index("alert_log_at").on(t.at)],
);
