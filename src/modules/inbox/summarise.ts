import { jsonDepthExceeds } from "../../lib/json-depth";
import { alertList, grafana, isAlertArray, isGrafana } from "./senders/alerts";
import { firstLine, join, type Json, MAX_LINE_CHARS, plural, str } from "./senders/common";
import { dockerHub, healthchecks, isDockerHub, isHealthchecks, isUptimeKuma, uptimeKuma } from "./senders/services";

/** Turns a third-party webhook payload into one readable line of at most `max` characters. */

export { MAX_LINE_CHARS };

/** Control characters go (newlines and tabs become spaces first), runs of spaces fold. */
export function oneLine(s: string): string {
  return s
    .replace(/[\r\n\t\u2028\u2029]+/g, " ")
    .replace(/[\p{Cc}\p{Cf}]/gu, "")
    .replace(/\s{2,}/g, " ")
    .trim();
}

export function cutChars(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : chars.slice(0, max - 1).join("") + "…";
}


/** GitHub, and Gitea and Forgejo, whose payloads copy GitHub's (their pusher has `login`, not `name`). */
function github(event: string, b: Json, forge = "GitHub"): string {
  const repo = str(b.repository?.full_name);
  if (event === "push") {
    const ref = str(b.ref).replace(/^refs\/(heads|tags)\//, "");
    const commits = Array.isArray(b.commits) ? b.commits.length : 0;
    const head = firstLine(b.head_commit?.message);
    return `${forge} push to ${repo} ${ref} by ${str(b.pusher?.name) || str(b.pusher?.login) || str(b.sender?.login)}: ${plural(commits, "commit")}${head ? `, "${head}"` : ""}`;
  }
  const item = b.pull_request ?? b.issue;
  if (item) return `${forge} ${event} ${str(b.action)} on ${repo}: #${str(item.number)} ${str(item.title)}`.replace(/\s+/g, " ");
  if (b.workflow_run) return `${forge} workflow "${str(b.workflow_run.name)}" ${str(b.workflow_run.conclusion) || str(b.workflow_run.status)} on ${repo} ${str(b.workflow_run.head_branch)}`;
  if (b.release) return `${forge} release ${str(b.action)} on ${repo}: ${str(b.release.tag_name)} ${str(b.release.name)}`;
  return join(forge, event, b.action, repo ? `on ${repo}` : "");
}

function gitlab(b: Json): string {
  const project = str(b.project?.path_with_namespace) || str(b.project?.name);
  const kind = str(b.object_kind);
  if (kind === "push" || kind === "tag_push") {
    const ref = str(b.ref).replace(/^refs\/(heads|tags)\//, "");
    const n = typeof b.total_commits_count === "number" ? b.total_commits_count : Array.isArray(b.commits) ? b.commits.length : 0;
    return `GitLab ${kind.replace("_", " ")} to ${project} ${ref} by ${str(b.user_name)}: ${plural(n, "commit")}`;
  }
  const attrs = b.object_attributes ?? {};
  if (kind === "merge_request" || kind === "issue") return join("GitLab", kind.replace("_", " "), attrs.action || attrs.state, `on ${project}:`, `!${str(attrs.iid)}`, attrs.title);
  if (kind === "pipeline") return join("GitLab pipeline", attrs.status, `on ${project}`, attrs.ref);
  return join("GitLab", kind, project ? `on ${project}` : "");
}

// Stripe's zero- and three-decimal currencies (docs.stripe.com/currencies); the rest have two.
const ZERO_DECIMAL = new Set(["bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf"]);
const THREE_DECIMAL = new Set(["bhd", "jod", "kwd", "omr", "tnd"]);

function money(amount: unknown, currency: unknown): string {
  if (typeof amount !== "number" || typeof currency !== "string") return "";
  const c = currency.toLowerCase();
  const value = ZERO_DECIMAL.has(c) ? String(amount) : THREE_DECIMAL.has(c) ? (amount / 1000).toFixed(3) : (amount / 100).toFixed(2);
  return `${value} ${currency.toUpperCase()}`;
}

function stripe(b: Json): string {
  const o = b.data?.object ?? {};
  return join("Stripe", b.type, o.id, money(o.amount ?? o.amount_total ?? o.amount_paid, o.currency), o.status, o.customer_email ?? o.receipt_email);
}

function sentry(b: Json): string {
  const issue = b.data?.issue ?? b.data?.event ?? b.event ?? {};
  const title = str(issue.title) || str(b.message) || str(b.culprit);
  const project = str(b.project_name) || str(issue.project?.slug) || str(b.project);
  const level = str(issue.level) || str(b.level);
  return join("Sentry", b.action, level, project ? `${project}:` : "", title, str(b.url) || str(issue.web_url) || str(issue.permalink));
}

function generic(b: Json): string | null {
  const title = str(b.title) || str(b.subject);
  const body = str(b.text) || str(b.message) || str(b.content) || str(b.summary) || str(b.description);
  if (!title && !body) return null;
  return title && body ? `${title}: ${body}` : title || body;
}

/** Deeper JSON is described, not parsed: no sender's real payload comes near it. */
export const MAX_JSON_DEPTH = 64;

const TOO_DEEP = Symbol("too deep");

/**
 * JSON.parse itself copes with any depth, but walking its result (JSON.stringify, the senders'
 * readers) recurses, and overflows the stack on a value nested some ten thousand levels deep.
 */
function parseShallow(text: string): unknown {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return TOO_DEEP;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A stored body as the summary and templates read it: its text, and its parsed JSON (a form's
 * fields, or the JSON of its `payload` field) when it has any, TOO_DEEP when nested too deep.
 */
export function readPayload(contentType: string | null, raw: Uint8Array): { text: string; parsed: unknown } {
  const text = new TextDecoder().decode(raw);
  let parsed: unknown;
  const looksJson = /json/i.test(contentType ?? "") || /^\s*[[{]/.test(text);
  if (looksJson) parsed = parseShallow(text);
  if (parsed === undefined && /x-www-form-urlencoded/i.test(contentType ?? "")) {
    const form = new URLSearchParams(text);
    const payload = form.get("payload"); // Slack-style and some others wrap JSON in a form field
    if (payload) parsed = parseShallow(payload);
    if (parsed === undefined) parsed = Object.fromEntries(form);
  }
  return { text, parsed };
}

/** What a template's paths start from: parsed JSON's object or array, else `{"body": the text}`. */
export function templateRoot({ text, parsed }: { text: string; parsed: unknown }): unknown {
  if (parsed !== null && typeof parsed === "object") return parsed;
  return { body: typeof parsed === "string" ? parsed : text };
}

/** Picks the sender by its headers or the payload's shape; falls back to compact JSON or the text. */
export function summarise(contentType: string | null, headers: Record<string, string>, raw: Uint8Array): string {
  return summariseRead(readPayload(contentType, raw), headers, raw.length);
}

export function summariseRead({ text, parsed }: { text: string; parsed: unknown }, headers: Record<string, string>, size: number): string {
  if (parsed === TOO_DEEP) return `JSON payload nested deeper than ${MAX_JSON_DEPTH} levels, ${size} bytes`;
  let summary: string | null = null;
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
    const b = parsed as Json;
    const ghEvent = headers["x-github-event"];
    // Gitea and Forgejo send X-GitHub-Event too (Forgejo also X-Gitea-Event): their own header wins.
    if (headers["x-forgejo-event"]) summary = github(headers["x-forgejo-event"], b, "Forgejo");
    else if (headers["x-gitea-event"]) summary = github(headers["x-gitea-event"], b, "Gitea");
    else if (ghEvent) summary = github(ghEvent, b);
    else if (headers["x-gitlab-event"] || (typeof b.object_kind === "string" && b.project)) summary = gitlab(b);
    else if (b.object === "event" && typeof b.type === "string" && b.data?.object) summary = stripe(b);
    // Grafana's group is Alertmanager-shaped, so it is told apart first (by orgId and state).
    else if (isGrafana(b)) summary = grafana(b);
    else if (Array.isArray(b.alerts) && typeof b.status === "string" && ("receiver" in b || "groupLabels" in b)) summary = alertList("Alertmanager", b);
    else if (isAlertArray(b.alerts)) summary = alertList("Alerts", b);
    else if (isUptimeKuma(b)) summary = uptimeKuma(b);
    else if (isHealthchecks(b)) summary = healthchecks(b);
    else if (isDockerHub(b)) summary = dockerHub(b);
    else if (headers["sentry-hook-resource"] || (b.data && (b.data.issue || b.data.event)) || ("project_name" in b && "culprit" in b)) summary = sentry(b);
    else if (b.repository && (b.commits || b.pusher)) summary = github("push", b);
    else summary = generic(b);
  } else if (isAlertArray(parsed)) {
    summary = alertList("Alerts", parsed); // the Alertmanager API's own body: a bare list of alerts
  }
  if (summary === null) summary = parsed !== undefined ? JSON.stringify(parsed) : text;
  return oneLine(summary) || "(empty payload)";
}

/** `<ISO timestamp> <summary>`, one line, at most 1,000 characters. */
export function inboxLine(receivedAt: string, summary: string): string {
  return cutChars(`${receivedAt} ${oneLine(summary)}`, MAX_LINE_CHARS);
}
