import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { sqlRows } from "../../db/sql";
import { notes } from "../../db/tables";
import { lastLines } from "../deadman/alert-lines";

/** Streams with lines or alerts that get a block of their own; past that, one line names how many more. */
const MAX_BLOCKS = 50;

export interface DigestMessage {
  title: string;
  text: string;
}

interface StreamActivity {
  id: string;
  name: string;
  status: string;
  lines: number;
  bytes: number;
  alerts: number;
}

function kb(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const plural = (n: number, word: string) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;

/**
 * A digest of a workspace's streams (all, or these filenames) from `since` to now: per stream the
 * lines and bytes appended, the alerts raised, its status now and its last lines; streams with
 * nothing new share one line.
 */
export async function composeDigest(
  deps: Deps,
  d: { workspaceId: string; streams: "all" | string[]; lastLines: number; timezone: string },
  since: number,
  now: number,
): Promise<DigestMessage> {
  const named = d.streams === "all" ? undefined : inArray(notes.filename, d.streams.length ? d.streams : [""]);
  const streams = await deps.db
    .select({ id: notes.id, filename: notes.filename, title: notes.title, status: notes.deadmanStatus, fullSince: notes.fullSince })
    .from(notes)
    .where(and(eq(notes.workspaceId, d.workspaceId), eq(notes.kind, "stream"), isNull(notes.trashedAt), named))
    .orderBy(asc(notes.filename));
  const ids = streams.map((s) => s.id);
  const written = new Map<string, { lines: number; bytes: number }>();
  const alerted = new Map<string, number>();
  if (ids.length > 0) {
    const inWorkspace = sql`note_id IN (SELECT id FROM notes WHERE workspace_id = ${d.workspaceId} AND kind = 'stream' AND trashed_at IS NULL)`;
    const rows = await sqlRows<{ note_id: string; lines: number | string; bytes: number | string }>(
      deps.store,
      sql`SELECT note_id, sum(length(text) - length(replace(text, ${"\n"}, ''))) AS lines, sum(octet_length(text)) AS bytes
          FROM note_chunks WHERE ${inWorkspace} AND at > ${since} AND at <= ${now} GROUP BY note_id`,
    );
    for (const r of rows) written.set(r.note_id, { lines: Number(r.lines), bytes: Number(r.bytes) });
    const alerts = await sqlRows<{ note_id: string; n: number | string }>(
      deps.store,
      // A recovery notice is logged beside the alerts but is not one: a failure and its end count once.
      sql`SELECT note_id, count(*) AS n FROM alert_log WHERE ${inWorkspace} AND at > ${since} AND at <= ${now} AND kind <> 'recovered' GROUP BY note_id`,
    );
    for (const r of alerts) alerted.set(r.note_id, Number(r.n));
  }
  const activity: StreamActivity[] = streams.map((s) => ({
    id: s.id,
    name: s.filename ?? s.title,
    status: s.fullSince !== null ? "full" : s.status === "off" ? "not watched" : s.status === "ok" ? "on time" : s.status,
    lines: written.get(s.id)?.lines ?? 0,
    bytes: written.get(s.id)?.bytes ?? 0,
    alerts: alerted.get(s.id) ?? 0,
  }));
  const active = activity.filter((a) => a.lines > 0 || a.alerts > 0);
  const quiet = activity.filter((a) => a.lines === 0 && a.alerts === 0);
  const totals = { lines: sum(active, "lines"), bytes: sum(active, "bytes"), alerts: sum(active, "alerts") };
  const out = [
    `Since ${local(since, d.timezone)} (${d.timezone}): ${plural(active.length, "stream")} of ${activity.length} wrote ${plural(totals.lines, "line")} (${kb(totals.bytes)}); ${plural(totals.alerts, "alert")}.`,
  ];
  for (const a of active.slice(0, MAX_BLOCKS)) {
    out.push("", `${a.name}: ${plural(a.lines, "line")}, ${kb(a.bytes)}, ${plural(a.alerts, "alert")}; ${a.status} now`);
    if (d.lastLines > 0 && a.lines > 0) for (const l of (await lastLines(deps, a.id)).slice(-d.lastLines)) out.push(`  ${l}`);
  }
  if (active.length > MAX_BLOCKS) out.push("", `… and ${active.length - MAX_BLOCKS} more streams with lines or alerts`);
  if (quiet.length > 0) out.push("", `Nothing new (${quiet.length}): ${quiet.map((q) => `${q.name} (${q.status})`).join(", ")}`);
  return { title: `Digest: ${plural(totals.lines, "line")}, ${plural(totals.alerts, "alert")} in ${plural(active.length, "stream")}`, text: out.join("\n") };
}

function sum(list: StreamActivity[], key: "lines" | "bytes" | "alerts"): number {
  return list.reduce((n, a) => n + a[key], 0);
}

/** A time as the digest's readers live it: their zone's wall clock. */
function local(at: number, timezone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: timezone, dateStyle: "medium", timeStyle: "short", hourCycle: "h23" }).format(new Date(at));
}
