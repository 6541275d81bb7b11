import { blob, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { notes } from "./notes";

/**
 * The durable job queue. A job is enqueued in the same transaction as the write that causes
 * it; runners claim it by compare-and-swap on a lease; an expired lease is claimed again.
 * Jobs sharing a `serial_key` (a note) run one at a time, in id order.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    id: integer("id").primaryKey(),
    queue: text("queue").notNull(),
    payload: text("payload").notNull(),
    serialKey: text("serial_key"),
    status: text("status", { enum: ["pending", "running", "done", "failed"] }).notNull().default("pending"),
    runAt: integer("run_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    leaseId: text("lease_id"),
    leaseExpiresAt: integer("lease_expires_at"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    finishedAt: integer("finished_at"),
  },
  (t) => [
    index("jobs_due").on(t.status, t.runAt),
    index("jobs_serial").on(t.serialKey, t.status, t.id),
    // Unfinished jobs only (a few, beside a day of finished ones): with it SQLite's planner knows
    // how few they are even after an ANALYZE, and reads them for the claim instead of scanning
    // the table (queue.ts dueJobs).
    index("jobs_unfinished").on(t.id).where(sql`status IN ('pending', 'running')`),
    index("jobs_finished").on(t.finishedAt),
  ],
);

/** Every outbound webhook attempt, for GET /notes/{id}/webhook/deliveries. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: integer("id").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    at: integer("at").notNull(),
    url: text("url").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    // At most 8 KB of what the receiver answered.
    response: text("response"),
    // Set on the attempt after which the webhook was disabled.
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [index("webhook_attempts_note").on(t.noteId, t.id)],
);

/** Raw payloads POSTed to an inbox URL, stored before the 202, turned into a line by a job. */
export const inboxDeliveries = sqliteTable(
  "inbox_deliveries",
  {
    id: text("id").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    receivedAt: integer("received_at").notNull(),
    contentType: text("content_type"),
    headers: text("headers").notNull(),
    body: blob("body", { mode: "buffer" }).notNull(),
    status: text("status", { enum: ["pending", "delivered", "dead"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    line: text("line"),
    deliveredAt: integer("delivered_at"),
  },
  (t) => [index("inbox_deliveries_note").on(t.noteId, t.status, t.receivedAt)],
);
