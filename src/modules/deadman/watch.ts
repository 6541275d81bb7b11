import type { Deps } from "../../deps";
import { ValidationFailed } from "../../http/errors";
import type { NoteRow } from "../notes/repo";
import { deadlineAfter } from "./deadline";
import { canonicalZone, checkedSchedule, MAX_GRACE_SECONDS, scheduledDeadline } from "./schedule";

export const MAX_INTERVAL_SECONDS = 366 * 24 * 3600;

export type DeadmanInput = {
  expected_interval_seconds?: number | null;
  schedule?: string | null;
  timezone?: string;
  grace_seconds?: number;
  alert_email?: string | null;
  max_run_seconds?: number | null;
  alert_webhook?: boolean;
};

/** What a PATCH changes of how the stream is watched: by its interval, by its schedule, or not. */
export function watchChanges(deps: Deps, note: NoteRow, input: DeadmanInput): Partial<NoteRow> {
  const changes: Partial<NoteRow> = {};
  const now = deps.clock.now();
  const min = deps.config.minIntervalSeconds;
  let { schedule, timezone, graceSeconds } = note;
  if (input.timezone !== undefined) {
    const zone = canonicalZone(input.timezone);
    if (zone === null) throw ValidationFailed.field("note.timezone", "unknown_zone", "timezone must be an IANA time zone name, such as Europe/Berlin");
    changes.timezone = timezone = zone;
  }
  if (input.grace_seconds !== undefined) {
    const grace = input.grace_seconds;
    if (!Number.isInteger(grace) || grace < 1 || grace > MAX_GRACE_SECONDS) {
      throw ValidationFailed.field("note.grace_seconds", "out_of_range", `grace_seconds must be a whole number from 1 to ${MAX_GRACE_SECONDS}`);
    }
    changes.graceSeconds = graceSeconds = grace;
  }
  const seconds = input.expected_interval_seconds;
  const cron = input.schedule;
  // Each clears the other; both at once leaves no way to tell which the client meant.
  if (seconds != null && cron != null) {
    throw ValidationFailed.field("note.schedule", "conflict", "set either schedule or expected_interval_seconds, not both: each clears the other");
  }
  if (cron !== undefined) {
    schedule = changes.schedule = cron === null ? null : checkedSchedule(cron, timezone, min, now);
    if (schedule !== null) changes.expectedIntervalSeconds = null;
  }
  if (seconds !== undefined && seconds !== null) {
    if (!Number.isInteger(seconds) || seconds < min || seconds > MAX_INTERVAL_SECONDS) {
      throw ValidationFailed.field(
        "note.expected_interval_seconds",
        "out_of_range",
        `expected_interval_seconds must be a whole number from ${min} to ${MAX_INTERVAL_SECONDS}`,
      );
    }
    // The clock starts now: a note that was quiet before the switch was set is not late at once.
    return Object.assign(changes, { expectedIntervalSeconds: seconds, schedule: null, deadmanStatus: "ok", deadmanDueAt: deadlineAfter(now, seconds) });
  }
  if (seconds === null) changes.expectedIntervalSeconds = null;
  if (schedule !== null && (cron !== undefined || input.timezone !== undefined || input.grace_seconds !== undefined)) {
    changes.deadmanStatus = "ok";
    changes.deadmanDueAt = neverWritten(note) ? null : scheduledDeadline({ schedule, timezone, graceSeconds }, note.lastWriteAt);
  } else if (schedule === null && (seconds === null || (cron === null && note.expectedIntervalSeconds === null))) {
    Object.assign(changes, { deadmanStatus: "off", deadmanDueAt: null });
  }
  return changes;
}

/** A stream no line has reached yet: its size is nought and its last write is its creation. */
export function neverWritten(note: Pick<NoteRow, "byteSize" | "lastWriteAt" | "createdAt">): boolean {
  return note.byteSize === 0 && note.lastWriteAt === note.createdAt;
}
