import { and, count, desc, eq } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { notes, webhookAttempts } from "../../db/schema";
import { ValidationFailed } from "../../http/errors";
import { cancelSerial, enqueue, type JobRow } from "../../jobs/queue";
import type { JobHandler, JobOutcome } from "../../jobs/runner";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { visibleNote, type NoteRow } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { shapeBody, type WebhookFormat } from "./formats";
import { enqueueMail } from "../../mail/queue";
import { webhookDisabled } from "../../mail/templates";
import { CONNECT_TIMEOUT_MS, postTo, type PostResult } from "./http";
import { newWebhookSecret, signatureHeaders } from "./sign";
import { checkedAddress, RefusedTarget, urlProblem } from "./target";

export const WEBHOOK_QUEUE = "webhook";
/** Consecutive failed attempts after which a webhook is disabled until the note is saved. */
export const DISABLE_AFTER = 10;
const MAX_RETRY_AFTER_MS = 3_600_000;
const USER_AGENT = "notestream-webhooks/1";

interface DeliveryPayload {
  deliveryId: string;
  noteId: string;
  createdAt: string;
  text: string;
  byteSize: number;
  updatedAt: string;
}

/** Inside an append's write: one delivery job, committed with the append, ordered per note. */
export function enqueueAppendDelivery(deps: Deps, note: NoteRow, text: string, byteSize: number, now: number): void {
  if (!note.webhookUrl || note.webhookStatus !== "enabled") return;
  const payload: DeliveryPayload = { deliveryId: newId("dlv"), noteId: note.id, createdAt: iso(now), text, byteSize, updatedAt: iso(now) };
  enqueue(deps, WEBHOOK_QUEUE, payload, { serialKey: note.id });
}

/**
 * The webhook part of a PATCH, inside its write: a URL is checked and gets a secret the first
 * time; null removes the webhook; any save re-arms a disabled webhook.
 */
export function webhookChanges(
  deps: Deps,
  note: NoteRow,
  input: { webhook_url?: string | null; webhook_format?: WebhookFormat },
): Partial<NoteRow> {
  const touches = input.webhook_url !== undefined || input.webhook_format !== undefined;
  if (touches && note.kind !== "stream") {
    throw ValidationFailed.field("note.webhook_url", "not_a_stream", "outbound webhooks belong to streams (append-only notes)");
  }
  const changes: Partial<NoteRow> = {};
  if (note.webhookStatus === "disabled") Object.assign(changes, { webhookStatus: "enabled", webhookFailures: 0 });
  if (input.webhook_format !== undefined) changes.webhookFormat = input.webhook_format;
  if (input.webhook_url === null) {
    Object.assign(changes, { webhookUrl: null, webhookStatus: "none", webhookFailures: 0 });
    cancelSerial(deps, WEBHOOK_QUEUE, note.id, "webhook removed");
  } else if (input.webhook_url !== undefined) {
    const url = input.webhook_url.trim();
    const problem = urlProblem(deps, url);
    if (problem) {
      const code = problem.startsWith("points at") ? "forbidden_target" : "invalid";
      throw ValidationFailed.field("note.webhook_url", code, `webhook_url ${problem}`);
    }
    Object.assign(changes, { webhookUrl: url, webhookStatus: "enabled", webhookFailures: 0, webhookSecret: note.webhookSecret ?? newWebhookSecret() });
  }
  return changes;
}

export const webhookHandler: JobHandler = { run: deliver };

/** One attempt: shape, sign, check the target, POST, then record it and count failures. */
async function deliver(deps: Deps, job: JobRow): Promise<JobOutcome | (() => JobOutcome)> {
  const p = JSON.parse(job.payload) as DeliveryPayload;
  const note = deps.db.select().from(notes).where(eq(notes.id, p.noteId)).get();
  if (!note || note.trashedAt !== null || !note.webhookUrl || !note.webhookSecret || note.webhookStatus !== "enabled") {
    return { fail: "the webhook was removed or disabled" };
  }
  const url = new URL(note.webhookUrl);
  const body = JSON.stringify(
    shapeBody(note.webhookFormat, {
      deliveryId: p.deliveryId,
      createdAt: p.createdAt,
      note: { id: note.id, filename: note.filename, title: note.title },
      text: p.text,
      byteSize: p.byteSize,
      updatedAt: p.updatedAt,
    }),
  );
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    ...signatureHeaders(note.webhookSecret, p.deliveryId, body, Math.floor(deps.clock.now() / 1000)),
  };
  let result: PostResult;
  try {
    const total = deps.config.webhookTimeoutMs;
    result = await postTo(url, await checkedAddress(deps, url), body, headers, { connect: Math.min(CONNECT_TIMEOUT_MS, total), total });
  } catch (e) {
    if (!(e instanceof RefusedTarget) && !(e instanceof Error)) throw e;
    result = { status: null, headers: {}, body: "", error: `target refused: ${e.message}`, durationMs: 0 };
  }
  // Recorded in the same write that settles the job.
  return () => recordAttempt(deps, note.id, p.deliveryId, job.attempts, note.webhookUrl!, result);
}

function recordAttempt(deps: Deps, noteId: string, deliveryId: string, attempt: number, url: string, r: PostResult): JobOutcome {
  const current = deps.db.select({ failures: notes.webhookFailures, status: notes.webhookStatus }).from(notes).where(eq(notes.id, noteId)).get();
  const ok = r.status !== null && r.status >= 200 && r.status < 300;
  const gone = r.status === 410;
  const failures = ok ? 0 : (current?.failures ?? 0) + 1;
  const disable = !ok && (gone || failures >= DISABLE_AFTER);
  const error =
    r.error ?? (ok ? null : r.status !== null && r.status >= 300 && r.status < 400 ? `redirect ${r.status} not followed` : `HTTP ${r.status}`);
  deps.db
    .insert(webhookAttempts)
    .values({
      noteId,
      deliveryId,
      attempt,
      at: deps.clock.now(),
      url,
      statusCode: r.status,
      durationMs: r.durationMs,
      error: disable ? `${error}; webhook disabled ${gone ? "(410 Gone)" : `after ${failures} consecutive failures`}` : error,
      response: r.body || null,
      disabled: disable,
    })
    .run();
  if (current) {
    deps.db
      .update(notes)
      .set({ webhookFailures: failures, ...(disable ? { webhookStatus: "disabled" as const } : {}) })
      .where(eq(notes.id, noteId))
      .run();
  }
  if (ok) return { ok: true };
  if (disable) {
    cancelSerial(deps, WEBHOOK_QUEUE, noteId, "webhook disabled");
    mailOwnerAboutDisable(deps, noteId, url, gone ? "the receiver answered 410 Gone" : `${failures} deliveries in a row failed (last: ${error})`);
    return { fail: error! };
  }
  return { retry: error!, delayMs: retryAfterMs(r) };
}

function mailOwnerAboutDisable(deps: Deps, noteId: string, url: string, reason: string): void {
  const n = deps.db.$client
    .query<{ title: string; filename: string | null; email: string }, [string]>(
      "SELECT n.title, n.filename, a.email FROM notes n JOIN workspaces w ON w.id = n.workspace_id JOIN accounts a ON a.id = w.owner_id WHERE n.id = ?",
    )
    .get(noteId);
  if (n) enqueueMail(deps, webhookDisabled({ to: n.email, noteTitle: n.title, filename: n.filename, url, reason }));
}

/** Retry-After in seconds or as an HTTP date, on 429 and 503, capped at an hour. */
function retryAfterMs(r: PostResult): number | undefined {
  if (r.status !== 429 && r.status !== 503) return undefined;
  const raw = r.headers["retry-after"];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}

export function listWebhookAttempts({ ctx, noteId, page }: { ctx: Ctx; noteId: string; page: Page }) {
  requireScope(ctx, "read");
  const note = visibleNote(ctx, noteId);
  const where = eq(webhookAttempts.noteId, note.id);
  const total = ctx.deps.db.select({ n: count() }).from(webhookAttempts).where(where).get()!.n;
  const rows = ctx.deps.db
    .select()
    .from(webhookAttempts)
    .where(and(where))
    .orderBy(desc(webhookAttempts.id))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  return {
    total,
    webhookStatus: note.webhookStatus,
    items: rows.map((r) => ({
      delivery_id: r.deliveryId,
      attempt: r.attempt,
      at: iso(r.at),
      url: r.url,
      status_code: r.statusCode,
      duration_ms: r.durationMs,
      error: r.error,
      response: r.response,
      disabled_webhook: r.disabled,
    })),
  };
}
