import { index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";
import { notes } from "./notes";
import { ms, rowId } from "./types";

export const channels = pgTable(
  "channels",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["mailto", "ntfy", "tgram", "pover", "gotify", "matrix", "webhook"] }).notNull(),
    url: text("url").notNull(),
    format: text("format", { enum: ["generic", "slack", "discord", "teams", "google_chat", "mattermost"] }).notNull().default("generic"),
    secret: text("secret"),
    status: text("status", { enum: ["enabled", "disabled"] }).notNull().default("enabled"),
    failures: integer("failures").notNull().default(0),
    lastError: text("last_error"),
    lastAttemptAt: ms("last_attempt_at"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [uniqueIndex("channels_workspace_name").on(t.workspaceId, t.name), index("channels_workspace_created").on(t.workspaceId, t.createdAt)],
);

export const notifyCursors = pgTable(
  "notify_cursors",
  {
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    channelId: text("channel_id").notNull().references(() => channels.id, { onDelete: "cascade" }),
    throughSeq: ms("through_seq").notNull().default(0),
    scheduledAt: ms("scheduled_at"),
    recentSends: text("recent_sends").notNull().default("[]"),
  },
  (t) => [primaryKey({ columns: [t.noteId, t.channelId] })],
);

export const digests = pgTable(
  "digests",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    schedule: text("schedule").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    channelId: text("channel_id").references(() => channels.id, { onDelete: "cascade" }),
    email: text("email"),
    streams: text("streams").notNull().default('"all"'),
    lastLines: integer("last_lines").notNull().default(5),
    lastSentAt: ms("last_sent_at"),
    nextRunAt: ms("next_run_at").notNull(),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("digests_next_run").on(t.nextRunAt), index("digests_workspace_created").on(t.workspaceId, t.createdAt)],
);

export const alertLog = pgTable(
  "alert_log",
  {
    id: rowId("id"),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    at: ms("at").notNull(),
    kind: text("kind").notNull(),
    text: text("text").notNull(),
  },
  (t) => [index("alert_log_note_at").on(t.noteId, t.at), index("alert_log_at").on(t.at)],
);
