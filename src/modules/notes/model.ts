import { t } from "elysia";
import { PageQuery } from "../../http/list";
import { Rule, RuleInput } from "../rules/model";

const WebhookFormatSchema = t.Union(
  [t.Literal("generic"), t.Literal("slack"), t.Literal("discord"), t.Literal("teams"), t.Literal("google_chat"), t.Literal("mattermost")],
  { description: "generic (signed envelope), slack, discord, teams, google_chat or mattermost" },
);

const RetentionSchema = t.Union([t.Literal("reject"), t.Literal("drop_oldest")], {
  description: "Streams at their size cap: reject refuses appends (cap_exceeded); drop_oldest removes the oldest lines to make room",
});

const Timestamp = t.String({ format: "date-time", description: "ISO 8601 UTC" });

const WINDOW_SCHEDULE = "cron (5 fields, or 6 with seconds first) of the times the window opens";
const MaintenanceWindow = t.Object({
  schedule: t.String({ description: WINDOW_SCHEDULE }),
  timezone: t.String({ description: "IANA time zone the schedule runs in" }),
  duration_seconds: t.Integer({ description: "How long the window stays open, 1 to 604800" }),
});
const MaintenanceWindowInput = t.Object({
  schedule: t.String({ description: WINDOW_SCHEDULE }),
  timezone: t.Optional(t.String({ description: "IANA time zone the schedule runs in (default UTC)" })),
  duration_seconds: t.Integer({ description: "How long the window stays open, 1 to 604800" }),
});

const NotifyEntry = t.Object(
  {
    channel_id: t.String(),
    events: t.Array(t.UnionEnum(["alerts", "lines"])),
    batch_seconds: t.Nullable(t.Integer()),
  },
  { $id: "#/components/schemas/NotifyEntry" },
);

export const NoteRecord = t.Object(
  {
    id: t.String({ description: "note_…" }),
    kind: t.Union([t.Literal("stream"), t.Literal("editable")]),
    format: t.Union([t.Literal("plain"), t.Literal("rich")]),
    filename: t.Nullable(t.String({ description: "Stream address; null for editable notes" })),
    title: t.String(),
    folder_id: t.Nullable(t.String()),
    byte_size: t.Integer({ description: "UTF-8 bytes of the body" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    last_write_at: Timestamp,
    webhook_url: t.Nullable(t.String()),
    webhook_format: WebhookFormatSchema,
    webhook_status: t.Union([t.Literal("none"), t.Literal("enabled"), t.Literal("disabled")], {
      description: "disabled after 10 consecutive failed deliveries or a 410; saving the note re-arms it",
    }),
    webhook_secret: t.Nullable(t.String({ description: "whsec_…: HMAC key of X-Service-Signature and the Standard Webhooks signature" })),
    inbox_enabled: t.Boolean(),
    expected_interval_seconds: t.Nullable(t.Integer({ description: "Dead-man's switch: seconds without a write before an alert; null is off" })),
    schedule: t.Nullable(t.String({ description: "Dead-man's switch by cron (5 fields, or 6 with seconds first) instead of an interval; null: none" })),
    timezone: t.String({ description: "IANA time zone the schedule runs in" }),
    grace_seconds: t.Integer({ description: "How long after a scheduled time a write may come before the stream is late" }),
    due_at: t.Nullable(t.String({ format: "date-time", description: "When the stream turns late without a write; null when it is not watched, is paused, or waits for its first write" })),
    alert_email: t.Nullable(t.String({ description: "Where dead-man alerts go; null means the account's address" })),
    deadman_status: t.Union([t.Literal("off"), t.Literal("ok"), t.Literal("late"), t.Literal("failing"), t.Literal("paused")], {
      description: "off; ok; late (no write within the interval, or a run past max_run_seconds); failing (the last signal was status fail); paused (POST /notes/{id}/pause: no alert until the next write)",
    }),
    quiet_until: t.Nullable(t.String({ format: "date-time", description: "No alert goes out before this time; a spell still on then alerts once. Null: not quiet" })),
    maintenance: t.Array(MaintenanceWindow, { description: "Recurring windows in which no alert starts; a spell still on when one ends alerts then" }),
    repeat_alert_seconds: t.Nullable(t.Integer({ description: "While late or failing, the alert repeats this often (at most 24 times a spell); null: no repeats" })),
    escalate_after_seconds: t.Nullable(t.Integer({ description: "A spell neither acknowledged nor ended this long after it began alerts escalate_to too, once; null: no escalation" })),
    escalate_to: t.Nullable(t.String({ description: "Where the escalation goes: an e-mail address or a channel id (chn_…)" })),
    notify: t.Array(NotifyEntry, { description: "Channels this stream's alerts (and lines) go to, besides mail" }),
    acknowledged_at: t.Nullable(t.String({ format: "date-time", description: "When the current late or failing spell was acknowledged (POST /notes/{id}/ack or a mail's link): no more repeats or escalation in it. Null: not acknowledged, or no spell" })),
    max_run_seconds: t.Nullable(t.Integer({ description: "How long a run may take after a status start append before it alerts; null: no limit" })),
    alert_webhook: t.Boolean({ description: "Dead-man and signal alerts also go to the stream's webhook, in its format" }),
    run_started_at: t.Nullable(Timestamp),
    last_run_seconds: t.Nullable(t.Number({ description: "From the last status start to the ok or fail that ended it" })),
    retention: RetentionSchema,
    retention_days: t.Nullable(t.Integer({ description: "Streams: lines older than this many days are removed; null keeps lines of any age" })),
    full: t.Boolean({ description: "The stream refuses appends because it is at its size cap under retention reject" }),
    rules: t.Array(Rule, { description: "Tried on each appended line in order; the first that matches acts. [] for none" }),
    inbox_template: t.Nullable(t.String({ description: "Streams: the template that makes each inbox payload's line ({{ path | filter }}); null: the built-in summary" })),
    plain_body: t.Optional(t.String({ description: "Present on single-note reads, absent from lists" })),
  },
  { $id: "#/components/schemas/Note" },
);
export type NoteRecord = typeof NoteRecord.static;

export const NoteList = t.Array(NoteRecord);

/** A note in the trash: its record (filename: the one it had), and when it went and will be purged. */
export const TrashedNote = t.Composite(
  [
    NoteRecord,
    t.Object({
      trashed_at: t.String({ format: "date-time", description: "When it went to the trash (deleted, or trashed after a trial)" }),
      purge_at: t.String({ format: "date-time", description: "When it is deleted for good and its storage freed: 30 days after trashed_at" }),
    }),
  ],
  { $id: "#/components/schemas/TrashedNote" },
);
export type TrashedNote = typeof TrashedNote.static;
export const TrashList = t.Array(TrashedNote);

export const CreateNoteBody = t.Object({
  note: t.Object({
    title: t.Optional(t.String({ description: "At most 200 characters; control characters are stripped. Default: Untitled" })),
    plain_body: t.Optional(t.String({ description: "Plain text; default empty" })),
    folder_id: t.Optional(t.Nullable(t.String())),
  }),
}, { $id: "#/components/schemas/NoteCreateRequest" });
export type CreateNoteInput = (typeof CreateNoteBody.static)["note"];

export const MAX_BULK = 50;

const NoteInput = t.Object(
  {
    title: t.Optional(t.String()),
    plain_body: t.Optional(t.String()),
    folder_id: t.Optional(t.Nullable(t.String())),
  },
  { $id: "#/components/schemas/NoteInput" },
);

export const BulkCreateBody = t.Object({
  notes: t.Array(NoteInput, { description: `1 to ${MAX_BULK} notes, created all together or not at all` }),
}, { $id: "#/components/schemas/NoteBulkCreateRequest" });

export const UpdateNoteBody = t.Object({
  note: t.Object({
    title: t.Optional(t.String()),
    plain_body: t.Optional(t.String({ description: "Editable plain notes only; a stream's body is appended to, not replaced (423)" })),
    folder_id: t.Optional(t.Nullable(t.String({ description: "fold_…, or null to unfile" }))),
    format: t.Optional(t.String({ description: "Immutable: sending a different value is refused" })),
    webhook_url: t.Optional(t.Nullable(t.String({ description: "Streams only: http(s) URL to POST each append to; null removes it" }))),
    webhook_format: t.Optional(WebhookFormatSchema),
    expected_interval_seconds: t.Optional(t.Nullable(t.Integer({ description: "Streams, Dev and Team plans: at least 60; null turns the switch off; clears schedule" }))),
    schedule: t.Optional(t.Nullable(t.String({ description: "Streams, Dev and Team plans: cron, 5 fields or 6 with seconds first, firing no more often than the minimum interval (60 s by default); clears expected_interval_seconds; null turns it off" }))),
    timezone: t.Optional(t.String({ description: "IANA name the schedule runs in (default UTC)" })),
    grace_seconds: t.Optional(t.Integer({ description: "1 to 604800 (default 300): how late after a scheduled time a write may come" })),
    alert_email: t.Optional(t.Nullable(t.String({ description: "Recipient of dead-man alerts; null means the account's address" }))),
    max_run_seconds: t.Optional(t.Nullable(t.Integer({ description: "Streams, Dev and Team plans: 1 to 604800; null removes the limit" }))),
    alert_webhook: t.Optional(t.Boolean({ description: "Streams: alerts also go to the webhook" })),
    quiet_until: t.Optional(t.Nullable(t.String({ description: "Streams: ISO date-time at most 30 days ahead before which no alert goes out; null or a past time clears it" }))),
    maintenance: t.Optional(t.Nullable(t.Array(MaintenanceWindowInput, { description: "Streams: up to 10 recurring windows without alerts; [] or null removes them" }))),
    repeat_alert_seconds: t.Optional(t.Nullable(t.Integer({ description: "Streams: at least the minimum interval (60 s by default); the alert repeats this often while late or failing, at most 24 times; null: none" }))),
    escalate_after_seconds: t.Optional(t.Nullable(t.Integer({ description: "Streams: at least the minimum interval; with escalate_to, an unacknowledged spell alerts there too after this long, once; null: none" }))),
    escalate_to: t.Optional(t.Nullable(t.String({ description: "Streams: the e-mail address or channel id (chn_…) an unacknowledged spell escalates to; null: none" }))),
    notify: t.Optional(
      t.Nullable(
        t.Array(
          t.Object({
            channel_id: t.String({ description: "chn_… of this workspace" }),
            events: t.Optional(t.Array(t.String(), { description: '["alerts"] (the default), ["lines"] or both' })),
            batch_seconds: t.Optional(t.Nullable(t.Integer({ description: "lines: one message per window of this many seconds (1 to 3600); null: one per append" }))),
          }),
          { description: "Streams: up to 10 channels; [] or null removes them" },
        ),
      ),
    ),
    retention: t.Optional(RetentionSchema),
    retention_days: t.Optional(t.Nullable(t.Integer({ description: "Streams: 1 to 3650 days; null keeps lines of any age" }))),
    rules: t.Optional(t.Nullable(t.Array(RuleInput, { description: "Streams: up to 20 rules tried on each appended line; [] or null removes them" }))),
    inbox_template: t.Optional(t.Nullable(t.String({ description: "Streams: at most 2,000 characters of text with {{ path }} placeholders and filters (default, upper, lower, join, count, truncate) making each inbox payload's line; null or \"\" removes it; a syntax error is 422 template_syntax with its position" }))),
  }),
}, { $id: "#/components/schemas/NoteUpdateRequest" });
export type UpdateNoteInput = (typeof UpdateNoteBody.static)["note"];

export const ListNotesQuery = t.Object({
  ...PageQuery,
  folder_id: t.Optional(t.String({ description: "Only notes in this folder (fold_…)" })),
  kind: t.Optional(t.Union([t.Literal("stream"), t.Literal("editable")])),
});

export const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) }, { $id: "#/components/schemas/Deleted" });
export const Purged = t.Object({ id: t.String(), purged: t.Literal(true) }, { $id: "#/components/schemas/Purged" });

export const NoteIdParams = t.Object({ id: t.String() });
export const FilenameParams = t.Object({ filename: t.String() });
