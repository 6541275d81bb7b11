import { Cron } from "croner";
import { ValidationFailed } from "../../http/errors";

/** A stream's cron schedule as the note row keeps it. */
export interface StreamSchedule {
  schedule: string;
  timezone: string;
  graceSeconds: number;
}

export const MAX_GRACE_SECONDS = 7 * 24 * 3600;
const MAX_EXPRESSION = 200;
/** How many of a schedule's next times are compared to find its shortest gap. */
const GAP_SAMPLE = 64;

/** The note's schedule, or null for a stream watched by its interval or not at all. */
export function scheduleOf(n: { schedule: string | null; timezone: string; graceSeconds: number }): StreamSchedule | null {
  return n.schedule === null ? null : { schedule: n.schedule, timezone: n.timezone, graceSeconds: n.graceSeconds };
}

/**
 * A parsed schedule, with the last time asked about (`from`) and its next run after it: every
 * write until that run has the same next run, so the appends of a busy stream ask croner (whose
 * time-zone arithmetic is most of an append's cost otherwise) about once per scheduled run.
 */
interface Parsed {
  cron: Cron;
  from: number;
  next: number | null;
}

/** Parsed schedules by zone and expression. */
const parsed = new Map<string, Parsed>();

function parsedOf(expression: string, timezone: string): Parsed {
  const key = `${timezone} ${expression}`;
  let p = parsed.get(key);
  if (p === undefined) {
    if (parsed.size >= 1000) parsed.clear();
    p = { cron: new Cron(expression, { timezone, paused: true }), from: Number.NaN, next: null };
    parsed.set(key, p);
  }
  return p;
}

const cronOf = (expression: string, timezone: string): Cron => parsedOf(expression, timezone).cron;

/** The first run of the schedule strictly after `at` (ms), or null when it never runs again. */
export function nextRunAfter(expression: string, timezone: string, at: number): number | null {
  const p = parsedOf(expression, timezone);
  if (p.next !== null && p.from <= at && at < p.next) return p.next;
  const next = p.cron.nextRun(new Date(at))?.getTime() ?? null;
  p.from = at;
  p.next = next;
  return next;
}

/**
 * When a scheduled stream turns late, having last been heard of at `at`: the first scheduled time
 * strictly after it, plus the grace (healthchecks' cron checks). Null when the schedule never
 * fires again.
 */
export function scheduledDeadline(s: StreamSchedule, at: number): number | null {
  const next = nextRunAfter(s.schedule, s.timezone, at);
  return next === null ? null : next + s.graceSeconds * 1000;
}

/** The zone's canonical IANA name, or null for a name the runtime does not know. */
export function canonicalZone(name: string): string | null {
  if (name.trim() === "") return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * A schedule as a user sent it, checked: 5 fields (or 6, seconds first), firing at all, and never
 * twice within `minSeconds` (the shortest interval the switch allows); answers it with single
 * spaces between fields.
 */
export function checkedSchedule(expression: string, timezone: string, minSeconds: number, now: number, field = "note.schedule"): string {
  const fields = expression.trim().split(/\s+/);
  if (expression.length > MAX_EXPRESSION || fields.length < 5 || fields.length > 6) {
    throw ValidationFailed.field(field, "invalid", "schedule must be a cron expression of 5 fields (or 6, seconds first)");
  }
  const normal = fields.join(" ");
  let cron: Cron;
  try {
    cron = cronOf(normal, timezone);
  } catch (e) {
    throw ValidationFailed.field(field, "invalid", `schedule is not a cron expression: ${(e as Error).message.replace(/^CronPattern: /, "")}`);
  }
  const runs = cron.nextRuns(GAP_SAMPLE, new Date(now)).map((d) => d.getTime());
  if (runs.length === 0) throw ValidationFailed.field(field, "never", "schedule never fires");
  for (let i = 1; i < runs.length; i++) {
    if (runs[i]! - runs[i - 1]! < minSeconds * 1000) {
      throw ValidationFailed.field(field, "too_frequent", `schedule fires more often than every ${minSeconds} seconds, the shortest interval allowed`);
    }
  }
  return normal;
}
