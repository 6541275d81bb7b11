import type { FieldProblem } from "../../http/errors";
import { MAX_QUIET_DAYS, MAX_WINDOW_SECONDS, MAX_WINDOWS } from "../deadman/quiet";
import { sentence, WHOLE_FORM } from "./settings-forms";
import { lengthText } from "./watch-view";

const ZONE = "Enter an IANA time zone name, such as Europe/Berlin or America/New_York.";

/** "schedule is not a cron expression: …" said of the field the reader is looking at. */
const cronText = (message: string) => sentence(message.replace(/^schedule /, "This schedule "));

/**
 * The service's refusals of a schedule, quiet time or maintenance window, said beside the field of
 * the watch cards' forms (watch-view.ts) they belong to: [form field, message], or null for a
 * problem about another field.
 */
export function watchProblem(p: FieldProblem, minSeconds: number): [string, string] | null {
  const atLeast = `Enter at least ${lengthText(minSeconds)}, in minutes, or leave it empty.`;
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
    case "note.repeat_alert_seconds":
      return ["repeat_minutes", atLeast];
    case "note.escalate_after_seconds":
      return ["escalate_minutes", p.code === "required" ? "Enter how long after the alert to escalate, or empty the address too." : atLeast];
    case "note.escalate_to":
      return ["escalate_to", p.code === "required" ? "Enter whom to escalate to, or empty the minutes too." : "Enter an e-mail address."];
    case "note.maintenance":
      return [WHOLE_FORM, p.code === "too_many" ? `A stream has at most ${MAX_WINDOWS} maintenance windows: remove one first.` : sentence(p.message)];
    default:
      return null;
  }
}
