import { type Json, join, MAX_LINE_CHARS, plural, str } from "./common";

/**
 * Alert groups (Alertmanager, Grafana, bare Prometheus-style lists) list every alert, not only the
 * first: a group often mixes alerts, and the one that matters may not be first.
 */

// inboxLine puts "<ISO timestamp> " (25 characters) in front; the list stops short of the cut so
// it ends in a readable "+N more" instead of a half name.
const BUDGET = MAX_LINE_CHARS - 25;
// An instance longer than this (a full URL, a pod name with hashes) costs more than it tells.
const SHORT = 40;
const SUMMARY_MAX = 200;

const cut = (s: string, max: number) => ([...s].length <= max ? s : [...s].slice(0, max - 1).join("") + "…");

function describe(a: Json, withValue: boolean): string {
  const labels = a.labels ?? {};
  const instance = str(labels.instance);
  const value = withValue ? str(a.valueString).trim() : "";
  const details = [str(labels.severity), instance.length <= SHORT ? instance : "", value.length <= 80 ? value : "", a.status === "resolved" ? "resolved" : ""].filter(Boolean);
  const name = str(labels.alertname) || "(unnamed)";
  return details.length ? `${name} (${details.join(", ")})` : name;
}

/** Items joined with ", " as far as they fit in `room`, then "+N more" for the rest and the `hidden`. */
function fit(items: string[], hidden: number, room: number): string {
  const total = items.length + hidden;
  let out = "";
  for (let i = 0; i < items.length; i++) {
    const next = out ? `${out}, ${items[i]}` : items[i]!;
    const rest = total - i - 1;
    if ([...next].length + (rest ? ` +${rest} more`.length : 0) > room) return `${out} +${total - i} more`.trim();
    out = next;
  }
  return hidden ? `${out} +${hidden} more`.trim() : out;
}

export function alertList(sender: string, b: Json | Json[], withValue = false): string {
  const group: Json = Array.isArray(b) ? {} : b;
  const alerts: Json[] = (Array.isArray(b) ? b : Array.isArray(b.alerts) ? b.alerts : []).filter((a) => a && typeof a === "object");
  const hidden = typeof group.truncatedAlerts === "number" && group.truncatedAlerts > 0 ? group.truncatedAlerts : 0;
  const firing = alerts.filter((a) => a.status === "firing").length;
  const resolved = alerts.filter((a) => a.status === "resolved").length;
  const counts = [firing ? `${firing} firing` : "", resolved ? `${resolved} resolved` : ""].filter(Boolean).join(", ");
  const summary = cut(str(group.commonAnnotations?.summary), SUMMARY_MAX);
  const head = join(sender, str(group.status).toUpperCase(), plural(alerts.length + hidden, "alert"), counts ? `(${counts})` : "") + (summary ? ` - ${summary}` : "");
  if (!alerts.length) return head;
  return `${head}: ${fit(alerts.map((a) => describe(a, withValue)), hidden, BUDGET - [...head].length - 2)}`;
}

/** Grafana's unified alerting sends an Alertmanager-shaped group plus `orgId`, `state`, `title`. */
export function grafana(b: Json): string {
  if (Array.isArray(b.alerts)) return alertList("Grafana", b, true);
  // Legacy (pre-8) alerting: one rule, its state and the message written on it.
  return join("Grafana", str(b.state) ? `${str(b.state)}:` : "", b.ruleName || b.title, str(b.message) ? `- ${str(b.message)}` : "");
}

export const isGrafana = (b: Json) =>
  ("orgId" in b && Array.isArray(b.alerts) && "state" in b) || (typeof b.ruleName === "string" && typeof b.state === "string");

/** Prometheus-style alerts without Alertmanager's group fields: each has `labels.alertname`. */
export function isAlertArray(v: unknown): v is Json[] {
  return Array.isArray(v) && v.length > 0 && v.every((a) => a && typeof a === "object" && typeof a.labels?.alertname === "string");
}
