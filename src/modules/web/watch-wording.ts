import type { FieldProblem } from "../../http/errors";
import { MAX_QUIET_DAYS, MAX_WINDOW_SECONDS, MAX_WINDOWS } from "../deadman/quiet";
import { sentence, WHOLE_FORM } from "./settings-forms";

const ZONE = "Enter an IANA time zone name, such as Europe/Berlin or America/New_York.";

/** "schedule is not a cron expression: …" said of the field the reader is looking at. */
const cronText = (message: string) => sentence(message.replace(/^schedule /, "This schedule "));

/**
 * The service's refusals of a schedule, quiet time or maintenance window, said beside the field of
 * the watch cards' forms (watch-view.ts) they belong to: [form field, message], or null for a
 * problem about another field.
 */
export function watchProblem(p: FieldProblem): [string, string] | null {
  const window = /^note\.maintenance\[\d+\]\.(\w+)$/.exec(p.field)?.[1];
  if (window === "schedule") return ["window_schedule", cronText(p.message)];
  if (window === "timezone") return ["window_timezone", ZONE];
  if (window === "duration_seconds") return ["window_minutes", `Enter a number of minutes from 1 to ${MAX_WINDOW_SECONDS / 60} (7 days).`];
  switch (p.field) {
    case "note.schedule":
      return ["schedule", cronText(p.message)];
    case "note.timezone":
      return ["timezone", ZONE];
    case "note.grace_seconds":
      return ["grace_minutes", "Enter a grace from 1 second to 7 days, in minutes (0.5 is 30 seconds)."];
    case "note.quiet_until":
      return ["quiet_until", p.code === "out_of_range" ? `Choose a time at most ${MAX_QUIET_DAYS} days ahead.` : "Enter a date and time."];
    case "note.maintenance":
      return [WHOLE_FORM, p.code === "too_many" ? `A stream has at most ${MAX_WINDOWS} maintenance windows: remove one first.` : sentence(p.message)];
    default:
      return null;
  }
}
