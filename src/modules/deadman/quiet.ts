import type { Deps } from "../../deps";
import { ValidationFailed } from "../../http/errors";
import { canonicalZone, checkedSchedule, nextRunAfter } from "./schedule";

/** A recurring maintenance window: it opens at each time of its schedule and stays open for its duration. */
export interface MaintenanceWindow {
  schedule: string;
  timezone: string;
  duration_seconds: number;
}

export type QuietInput = {
  quiet_until?: string | null;
  maintenance?: { schedule: string; timezone?: string; duration_seconds: number }[] | null;
};

/** The columns of a note this file reads and writes (notes/repo.ts reads windowsOf, so no import of it here). */
interface QuietColumns {
  quietUntil: number | null;
  maintenance: string | null;
  alertOwedAt: number | null;
}

export const MAX_QUIET_DAYS = 30;
export const MAX_WINDOWS = 10;
export const MAX_WINDOW_SECONDS = 7 * 24 * 3600;
/** Windows may follow one another; past this many the held-back alert is looked at again then. */
const MAX_CHAIN = 32;

/** The note's maintenance windows as the row keeps them (JSON), [] for none. */
export function windowsOf(n: { maintenance: string | null }): MaintenanceWindow[] {
  return n.maintenance === null ? [] : (JSON.parse(n.maintenance) as MaintenanceWindow[]);
}

/**
 * When alerts may go out again, for a stream asked at `now`: the end of its quiet time, or of the
 * maintenance window it is in (chained, when one ends inside another); null when nothing holds
 * alerts back now.
 */
export function heldUntil(n: { quietUntil: number | null; maintenance: string | null }, now: number): number | null {
  const windows = windowsOf(n);
  // Rows read with raw SQL on PostgreSQL may carry a bigint as a string.
  const quiet = n.quietUntil === null ? null : Number(n.quietUntil);
  let at = now;
  for (let i = 0; i < MAX_CHAIN; i++) {
    let end = at;
    if (quiet !== null && quiet > end) end = quiet;
    for (const w of windows) {
      // The window's last opening at or before `end` is the first one after end - duration.
      const open = nextRunAfter(w.schedule, w.timezone, end - w.duration_seconds * 1000);
      if (open !== null && open <= end) end = Math.max(end, open + w.duration_seconds * 1000);
    }
    if (end === at) break;
    at = end;
  }
  return at > now ? at : null;
}

/**
 * The quiet part of a PATCH: quiet_until (a time in the past clears it) and the maintenance
 * windows, checked. An alert already held back is looked at again at the next sweep, under the
 * new rules.
 */
export function quietChanges(deps: Deps, note: { kind: string; alertOwedAt: number | null }, input: QuietInput): Partial<QuietColumns> {
  if (input.quiet_until === undefined && input.maintenance === undefined) return {};
  const field = input.quiet_until !== undefined ? "note.quiet_until" : "note.maintenance";
  if (note.kind !== "stream") throw ValidationFailed.field(field, "not_a_stream", "quiet and maintenance belong to streams (append-only notes)");
  const now = deps.clock.now();
  const changes: Partial<QuietColumns> = {};
  if (input.quiet_until !== undefined) changes.quietUntil = checkedQuietUntil(input.quiet_until, now);
  if (input.maintenance !== undefined) changes.maintenance = checkedWindows(input.maintenance ?? [], deps.config.minIntervalSeconds, now);
  if (note.alertOwedAt !== null) changes.alertOwedAt = now;
  return changes;
}

function checkedQuietUntil(value: string | null, now: number): number | null {
  if (value === null) return null;
  const at = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(at)) {
    throw ValidationFailed.field("note.quiet_until", "invalid", "quiet_until must be an ISO 8601 date-time, such as 2026-11-27T18:00:00Z, or null");
  }
  if (at - now > MAX_QUIET_DAYS * 24 * 3600 * 1000) {
    throw ValidationFailed.field("note.quiet_until", "out_of_range", `quiet_until may be at most ${MAX_QUIET_DAYS} days ahead`);
  }
  return at > now ? at : null;
}

function checkedWindows(input: NonNullable<QuietInput["maintenance"]>, minSeconds: number, now: number): string | null {
  if (input.length > MAX_WINDOWS) throw ValidationFailed.field("note.maintenance", "too_many", `a stream has at most ${MAX_WINDOWS} maintenance windows`);
  const windows = input.map((w, i): MaintenanceWindow => {
    const at = `note.maintenance[${i}]`;
    const timezone = canonicalZone(w.timezone ?? "UTC");
    if (timezone === null) throw ValidationFailed.field(`${at}.timezone`, "unknown_zone", "timezone must be an IANA time zone name, such as Europe/Berlin");
    const d = w.duration_seconds;
    if (!Number.isInteger(d) || d < 1 || d > MAX_WINDOW_SECONDS) {
      throw ValidationFailed.field(`${at}.duration_seconds`, "out_of_range", `duration_seconds must be a whole number from 1 to ${MAX_WINDOW_SECONDS}`);
    }
    return { schedule: checkedSchedule(w.schedule, timezone, minSeconds, now, `${at}.schedule`), timezone, duration_seconds: d };
  });
  return windows.length === 0 ? null : JSON.stringify(windows);
}
