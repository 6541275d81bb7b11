import type { MailMessage } from "./mailer";

/**
 * Where the note is and what it said last: the part every alert about a stream ends with; an
 * alert about a spell (late, failing) has its acknowledge link too.
 */
function noteAndLastLines(a: { baseUrl: string; noteId: string; lastLines: string[]; ackUrl?: string }): string[] {
  return [
    `Note: ${a.baseUrl}/api/v1/notes/${a.noteId}`,
    ...(a.ackUrl ? [`Acknowledge (no more repeats or escalation of this alert): ${a.ackUrl}`] : []),
    "",
    a.lastLines.length ? "Its last lines:" : "It has no lines yet.",
    ...a.lastLines.map((l) => `  ${l}`),
  ];
}

/** A spell's alert: each mail has its own acknowledge link. */
type SpellAlert = { to: string; noteTitle: string; filename: string | null; noteId: string; lastLines: string[]; baseUrl: string; ackUrl?: string };

/** Mail texts. Pure functions of their inputs, so they are tested as strings. */

function ago(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} seconds`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m} minutes`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h} hours` : `${Math.round(h / 24)} days`;
}

export function deadmanAlert(a: {
  to: string;
  noteTitle: string;
  filename: string | null;
  noteId: string;
  lastWriteAt: string;
  silentForMs: number;
  intervalSeconds: number | null;
  /** A scheduled stream's cron expression and time zone, when it has one instead of an interval. */
  schedule?: { schedule: string; timezone: string; graceSeconds: number } | null;
  lastLines: string[];
  baseUrl: string;
  /** Set when the stream refuses appends because it is full: writes are arriving, none is stored. */
  fullSince?: string | null;
  ackUrl?: string;
}): MailMessage {
  const name = a.filename ?? a.noteTitle;
  const full = a.fullSince ?? null;
  return {
    to: a.to,
    subject: full ? `[notestream] ${name} is full and refusing writes` : `[notestream] ${name} has gone quiet`,
    text: [
      full
        ? `Appends to "${name}" are being refused because the stream is full (since ${full}): none has been stored for ${ago(a.silentForMs)}; set retention or free space.`
        : `No write has reached "${name}" for ${ago(a.silentForMs)} (${expected(a)}).`,
      "",
      `${full ? "Last stored write" : "Last heard from"}: ${a.lastWriteAt}`,
      ...noteAndLastLines(a),
      "",
      "You will get one more mail when writes resume.",
    ].join("\n"),
  };
}

function expected(a: { intervalSeconds: number | null; schedule?: { schedule: string; timezone: string; graceSeconds: number } | null }): string {
  if (a.schedule) return `expected on the schedule "${a.schedule.schedule}" in ${a.schedule.timezone}, within ${ago(a.schedule.graceSeconds * 1000)}`;
  return `expected at least every ${ago((a.intervalSeconds ?? 0) * 1000)}`;
}

/** A run reported failure (status fail): at once, once until an ok. */
export function signalFailed(a: SpellAlert & { at: string; line: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name} reported a failure`,
    text: [
      `"${name}" reported a failure at ${a.at}:`,
      "",
      `  ${a.line}`,
      "",
      ...noteAndLastLines(a),
      "",
      "You will get one more mail when it reports ok again; further failures until then send none.",
    ].join("\n"),
  };
}

/** A line matched one of the stream's rules with `then: alert` (at most one such mail a minute per stream). */
export function ruleMatched(a: { to: string; noteTitle: string; filename: string | null; noteId: string; at: string; line: string; rule: string; baseUrl: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name}: a line matched a rule`,
    text: [
      `A line written to "${name}" at ${a.at} matched the rule ${a.rule}:`,
      "",
      `  ${a.line}`,
      "",
      `Note: ${a.baseUrl}/api/v1/notes/${a.noteId}`,
      "",
      "Further matches within a minute send no mail.",
    ].join("\n"),
  };
}

/** A run started (status start) and has not reported within max_run_seconds. */
export function runOverdue(a: SpellAlert & { startedAt: string; maxRunSeconds: number }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name}: a run has not finished`,
    text: [
      `A run of "${name}" started at ${a.startedAt} and has not reported ok or fail within ${ago(a.maxRunSeconds * 1000)}: it may hang or have died.`,
      "",
      ...noteAndLastLines(a),
      "",
      "You will get one more mail when it reports again.",
    ].join("\n"),
  };
}

/** A spell still on: repeat_alert_seconds after the last alert, at most `of` times. */
export function alertRepeated(a: SpellAlert & { status: "late" | "failing"; since: string; forMs: number; repeat: number; of: number }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name} is still ${a.status} (${ago(a.forMs)})`,
    text: [
      `"${name}" has been ${a.status} for ${ago(a.forMs)}, since ${a.since}.`,
      "",
      ...noteAndLastLines(a),
      "",
      a.repeat < a.of ? `This is reminder ${a.repeat} of at most ${a.of} for this alert.` : `This is the last reminder (${a.of}) for this alert.`,
    ].join("\n"),
  };
}

/** A spell neither acknowledged nor ended after escalate_after_seconds: once, to escalate_to. */
export function alertEscalated(a: SpellAlert & { status: "late" | "failing"; since: string; forMs: number }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] escalated: ${name} has been ${a.status} for ${ago(a.forMs)}`,
    text: [
      `"${name}" has been ${a.status} for ${ago(a.forMs)}, since ${a.since}, and nobody has acknowledged its alert.`,
      "This address is the stream's escalation contact; this is the only escalation mail of this alert.",
      "",
      ...noteAndLastLines(a),
    ].join("\n"),
  };
}

/** Once per full spell of a stream under retention `reject`, at its first refused append. */
export function streamFull(a: { to: string; noteTitle: string; filename: string | null; noteId: string; since: string; capBytes: number | null; baseUrl: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  const cap = a.capBytes === null ? "" : ` (its cap is ${+(a.capBytes / 1024 / 1024).toFixed(2)} MB)`;
  return {
    to: a.to,
    subject: `[notestream] ${name} is full`,
    text: [
      `${name} is full: appends are being refused since ${a.since}; set retention or free space.`,
      "",
      `The stream holds as much as its plan allows${cap}, and its retention is "reject", so every further line is refused.`,
      `To keep the newest lines instead, set its retention to drop_oldest (on the stream's settings page, or`,
      `PATCH ${a.baseUrl}/api/v1/notes/${a.noteId} with {"note": {"retention": "drop_oldest"}}), or set retention_days.`,
      "",
      "This is the only mail for this spell: the next comes if it is full again after appends succeed or retention changes.",
    ].join("\n"),
  };
}

export function deadmanRecovered(a: { to: string; noteTitle: string; filename: string | null; resumedAt: string; line: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name} is writing again`,
    text: [`"${name}" received a write again at ${a.resumedAt}:`, "", `  ${a.line}`].join("\n"),
  };
}

export function exportReady(a: { to: string; url: string; apiUrl: string; expiresAt: string; notes: number; sizeBytes: number }): MailMessage {
  return {
    to: a.to,
    subject: "[notestream] your export is ready",
    text: [
      `Your export of ${a.notes} notes (${(a.sizeBytes / 1024).toFixed(1)} KB, zip) is ready. Download it while signed in:`,
      "",
      `  ${a.url}`,
      "",
      "or with a read token of the workspace (Authorization: Bearer):",
      "",
      `  ${a.apiUrl}`,
      "",
      `Both work until ${a.expiresAt}; after that the file is deleted.`,
    ].join("\n"),
  };
}

export function webhookDisabled(a: { to: string; noteTitle: string; filename: string | null; url: string; reason: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] the webhook of ${name} was disabled`,
    text: [
      `Deliveries to ${a.url} kept failing, so the webhook of "${name}" was disabled: ${a.reason}.`,
      "",
      "Fix the receiver, then save the note (any PATCH) to re-arm it. The deliveries log shows each attempt.",
    ].join("\n"),
  };
}

/** Ten deliveries in a row failed: the channel is off until it is saved again. */
export function channelDisabled(a: { to: string; channelName: string; url: string; reason: string; baseUrl: string }): MailMessage {
  return {
    to: a.to,
    subject: `[notestream] channel "${a.channelName}" was disabled`,
    text: [
      `Deliveries to the channel "${a.channelName}" (${a.url}) failed, so it was disabled: ${a.reason}.`,
      "",
      "Nothing more goes to it until it is re-enabled: fix the receiver (or the URL), then save the channel",
      `(PATCH ${a.baseUrl}/api/v1/channels/{id}); POST …/test tells whether it works.`,
    ].join("\n"),
  };
}
