import { and, asc, desc, eq, getTableColumns, isNull, sql, type SQL } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { noteChunks, notes } from "../../db/tables";
import { NotFound } from "../../http/errors";
import { paged } from "../../db/paged";
import { tableRows } from "../../db/sql";
import { mayNameRow } from "../../db/keys";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { notifyOf } from "../channels/notify";
import { windowsOf } from "../deadman/quiet";
import { folderNoteCount } from "../folders/repo";
import { rulesOf } from "../rules/rules";
import { seesNote } from "../tokens/service";
import { activeNotes, getWorkspace } from "../workspaces/repo";
import type { NoteRecord } from "./model";

export type NoteRow = typeof notes.$inferSelect;
/** A note without its body: what lists need. */
export type NoteMeta = Omit<NoteRow, "body" | "richHtml" | "trashedFilename">;

const { body: _body, richHtml: _richHtml, trashedFilename: _tf, ...metaColumns } = getTableColumns(notes);

/** A new note row with every column at its default; callers give what differs. */
export function newNoteRow(
  n: Pick<NoteRow, "workspaceId" | "kind" | "title"> & Partial<NoteRow>,
  now: number,
): NoteRow {
  return {
    id: newId("note"),
    format: "plain",
    filename: null,
    folderId: null,
    body: null,
    richHtml: null,
    byteSize: 0,
    createdAt: now,
    updatedAt: now,
    lastWriteAt: now,
    trashedAt: null,
    trashedFilename: null,
    webhookUrl: null,
    webhookFormat: "generic",
    webhookSecret: null,
    webhookStatus: "none",
    webhookFailures: 0,
    inboxTokenHash: null,
    badgeTokenHash: null,
    expectedIntervalSeconds: null,
    alertEmail: null,
    deadmanStatus: "off",
    deadmanDueAt: null,
    schedule: null,
    timezone: "UTC",
    graceSeconds: 300,
    quietUntil: null,
    maintenance: null,
    alertOwedAt: null,
    repeatAlertSeconds: null,
    escalateAfterSeconds: null,
    escalateTo: null,
    notify: null,
    rules: null,
    inboxTemplate: null,
    spellStartedAt: null,
    alertedAt: null,
    alertRepeats: 0,
    escalatedAt: null,
    acknowledgedAt: null,
    nextAlertAt: null,
    runStartedAt: null,
    lastRunMs: null,
    maxRunSeconds: null,
    alertWebhook: false,
    retention: "reject",
    retentionDays: null,
    fullSince: null,
    ...n,
  };
}

/**
 * A note as the API shows it to this caller. The webhook secret signs what receivers trust, so
 * only callers that may change the webhook (the write scope) see it; others get null, keeping
 * the record's shape.
 */
export function toRecord(ctx: Ctx, row: NoteMeta, plainBody?: string): NoteRecord {
  return {
    id: row.id,
    kind: row.kind,
    format: row.format,
    filename: row.filename,
    title: row.title,
    folder_id: row.folderId,
    byte_size: row.byteSize,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    last_write_at: iso(row.lastWriteAt),
    webhook_url: row.webhookUrl,
    webhook_format: row.webhookFormat,
    webhook_status: row.webhookStatus,
    webhook_secret: ctx.principal.scopes.has("write") ? row.webhookSecret : null,
    inbox_enabled: row.inboxTokenHash !== null,
    expected_interval_seconds: row.expectedIntervalSeconds,
    schedule: row.schedule,
    timezone: row.timezone,
    grace_seconds: row.graceSeconds,
    // A paused stream goes late at no time: its deadline is set again by its next write.
    due_at: row.deadmanStatus === "off" || row.deadmanStatus === "paused" || row.deadmanDueAt === null ? null : iso(Number(row.deadmanDueAt)),
    alert_email: row.alertEmail,
    deadman_status: row.deadmanStatus,
    quiet_until: row.quietUntil === null || row.quietUntil <= ctx.deps.clock.now() ? null : iso(Number(row.quietUntil)),
    maintenance: windowsOf(row),
    repeat_alert_seconds: row.repeatAlertSeconds,
    escalate_after_seconds: row.escalateAfterSeconds,
    escalate_to: row.escalateTo,
    notify: notifyOf(row),
    acknowledged_at: row.acknowledgedAt === null ? null : iso(Number(row.acknowledgedAt)),
    max_run_seconds: row.maxRunSeconds,
    // Rows read with raw SQL (the append path's) carry SQLite's 0/1.
    alert_webhook: Boolean(row.alertWebhook),
    run_started_at: row.runStartedAt === null ? null : iso(row.runStartedAt),
    last_run_seconds: row.lastRunMs === null ? null : Math.round(row.lastRunMs / 100) / 10,
    retention: row.retention,
    retention_days: row.retentionDays,
    full: row.fullSince !== null,
    rules: rulesOf(row),
    inbox_template: row.inboxTemplate,
    ...(plainBody === undefined ? {} : { plain_body: plainBody }),
  };
}

/** A stream's text is its chunks in append order, concatenated exactly. */
export async function readBody(deps: Deps, row: NoteRow): Promise<string> {
  if (row.kind === "editable") return row.body ?? "";
  const chunks = await deps.db.select({ text: noteChunks.text }).from(noteChunks).where(eq(noteChunks.noteId, row.id)).orderBy(asc(noteChunks.seq));
  return chunks.map((c) => c.text).join("");
}

/** The workspace's most recently updated notes, for a note picker (a token is never pinned to a trashed one). */
export async function recentNotes(deps: Deps, workspaceId: string, limit: number) {
  return deps.db
    .select({ id: notes.id, title: notes.title, filename: notes.filename, kind: notes.kind })
    .from(notes)
    .where(and(eq(notes.workspaceId, workspaceId), isNull(notes.trashedAt)))
    .orderBy(desc(notes.updatedAt))
    .limit(limit);
}

/**
 * The note with this id as the caller may see it: in the caller's workspace, not trashed and,
 * for a pinned token, the pinned note only. Anything else is the same 404 as a missing note.
 */
export async function visibleNote(ctx: Ctx, id: string, opts: { lock?: boolean } = {}): Promise<NoteRow> {
  const { principal } = ctx;
  if (!seesNote(principal, id) || !mayNameRow(id)) throw new NotFound("note");
  const [row] = await tableRows(ctx.deps.store, notes, "WHERE id = ? AND workspace_id = ? AND trashed_at IS NULL", [id, principal.workspaceId], opts);
  if (!row) throw new NotFound("note");
  return row;
}

/**
 * The stream with this filename in a workspace, whoever asks: every append by filename starts
 * here, so a statement kept compiled on the (workspace, filename) index (tableRows). Callers
 * apply the pin. `lock`: an append's write holds the row until it commits.
 */
export async function streamByFilename(deps: Deps, workspaceId: string, filename: string, opts: { lock?: boolean } = {}): Promise<NoteRow | undefined> {
  if (!mayNameRow(filename)) return undefined;
  const [row] = await tableRows(deps.store, notes, "WHERE workspace_id = ? AND filename = ?", [workspaceId, filename], opts);
  return row;
}

/** The stream with this filename as the caller may see it, like visibleNote: anything else is the same 404. */
export async function visibleStream(ctx: Ctx, filename: string): Promise<NoteRow> {
  const row = await streamByFilename(ctx.deps, ctx.principal.workspaceId, filename);
  if (!row || !seesNote(ctx.principal, row.id)) throw new NotFound("note");
  return row;
}

export interface NoteListFilter {
  folderId?: string;
  kind?: "stream" | "editable";
  titleContains?: string;
}

/** The notes a list may show: the caller's workspace, not trashed, a pinned token's note only, and the filter's. */
export function noteListConds(ctx: Ctx, filter: NoteListFilter): SQL[] {
  const conds: SQL[] = [eq(notes.workspaceId, ctx.principal.workspaceId), isNull(notes.trashedAt)];
  // seesNote's rule as a filter: a pinned token's list holds its note at most.
  if (ctx.principal.noteId) conds.push(eq(notes.id, ctx.principal.noteId));
  if (filter.folderId) conds.push(eq(notes.folderId, filter.folderId));
  if (filter.kind) conds.push(eq(notes.kind, filter.kind));
  if (filter.titleContains) {
    // Without ESCAPE, SQLite's LIKE takes the backslash literally and a typed % or _ as a wildcard.
    // LIKE ignores ASCII case on SQLite and not on PostgreSQL.
    const pattern = `%${filter.titleContains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conds.push(sql`${notes.title} LIKE ${pattern} ESCAPE '\\'`);
  }
  return conds;
}

/** One page of notes without bodies, newest change first; `where` narrows further (the board's filters). */
export async function listNoteRows(ctx: Ctx, filter: NoteListFilter & { where?: SQL }, page: Page): Promise<{ rows: NoteMeta[]; total: number }> {
  const conds = noteListConds(ctx, filter);
  if (filter.where) conds.push(filter.where);
  const where = and(...conds);
  const rows = ctx.deps.db.select(metaColumns).from(notes).where(where).orderBy(desc(notes.updatedAt), desc(notes.id));
  const { items, total } = await paged(ctx.deps.db, { from: notes, where, rows, page, kept: await keptTotal(ctx, filter) });
  return { rows: items, total };
}

/**
 * How many notes the list holds, where the counters kept on the workspace's and the folder's rows
 * say it (migrations/0018): the whole list, streams or editable notes, a folder's notes. Lists
 * narrowed otherwise (a pinned token's, by title, by the board's filters) are counted.
 */
async function keptTotal(ctx: Ctx, filter: NoteListFilter & { where?: SQL }): Promise<number | undefined> {
  if (ctx.principal.noteId || filter.titleContains || filter.where) return undefined;
  const { deps, principal } = ctx;
  if (filter.folderId) return filter.kind ? undefined : folderNoteCount(deps, principal.workspaceId, filter.folderId);
  const ws = await getWorkspace(deps, principal.workspaceId);
  if (filter.kind === "stream") return ws.streamNotes;
  return activeNotes(ws) - (filter.kind === "editable" ? ws.streamNotes : 0);
}
