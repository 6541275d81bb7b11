import { bigint, boolean, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { notes } from "./notes";
import { bytea, ms, rowId } from "./types";

// The PostgreSQL twin of src/db/schema/jobs.ts.

export const jobs = pgTable(
  "jobs",
  {
    id: rowId("id"),
    queue: text("queue").notNull(),
    // JSON as text, as in SQLite: the queue's TypeBox schema checks it on the way out.
    payload: text("payload").notNull(),
    serialKey: text("serial_key"),
    status: text("status", { enum: ["pending", "running", "done", "failed"] }).notNull().default("pending"),
    runAt: ms("run_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    leaseId: text("lease_id"),
    leaseExpiresAt: ms("lease_expires_at"),
    lastError: text("last_error"),
    createdAt: ms("created_at").notNull(),
    finishedAt: ms("finished_at"),
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

export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: rowId("id"),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    at: ms("at").notNull(),
    url: text("url").notNull(),
    statusCode: integer("status_code"),
    durationMs: bigint("duration_ms", { mode: "number" }).notNull(),
    error: text("error"),
    response: text("response"),
    disabled: boolean("disabled").notNull().default(false),
  },
  (t) => [index("webhook_attempts_note").on(t.noteId, t.id)],
);

export const inboxDeliveries = pgTable(
  "inbox_deliveries",
  {
    id: text("id").primaryKey(),
    noteId: text("note_id").notNull().references(() => notes.id, { onDelete: "cascade" }),
    receivedAt: ms("received_at").notNull(),
    contentType: text("content_type"),
    headers: text("headers").notNull(),
    body: bytea("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "dead"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    line: text("line"),
    deliveredAt: ms("delivered_at"),
  },
  (t) => [index("inbox_deliveries_note").on(t.noteId, t.status, t.receivedAt)],
);
