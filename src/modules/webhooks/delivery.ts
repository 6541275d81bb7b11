import { and, desc, eq } from "drizzle-orm";
import { t } from "elysia";
import type { Deps } from "../../deps";
import { accounts, notes, webhookAttempts, workspaces } from "../../db/tables";
import { defineQueue } from "../../jobs/define-queue";
import type { JobRow } from "../../jobs/queue";
import type { InWriteOutcome, JobOutcome, Settled } from "../../jobs/runner";
import { logEvent } from "../../http/log";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { enqueueMail } from "../../mail/queue";
import { webhookDisabled } from "../../mail/templates";
import type { NoteRow } from "../notes/repo";
import type { AppendHook } from "../streams/append/hooks";
import { shapeBody } from "./formats";
import { retryAfterMs, type PostResult } from "./http";
import { signatureHeaders } from "./sign";
import { guardedPost, succeeded } from "./target";

/** Consecutive failed attempts after which a webhook is disabled until the note is saved. */
export const DISABLE_AFTER = 10;
const USER_AGENT = "notestream-webhooks/1";

/** One append to tell the receiver about; the note's URL, format and secret are read at each attempt. */
export const WebhookDelivery = t.Object({
  deliveryId: t.String(),
  noteId: t.String(),
  createdAt: t.String(),
  text: t.String(),
  byteSize: t.Integer(),
  updatedAt: t.String(),
  /** Set for an alert (dead-man, signals) sent to a stream with alert_webhook, and for a test delivery (test-delivery.ts). */
  event: t.Optional(t.Union([t.Literal("note.alert"), t.Literal("webhook.test")])),
});
export type WebhookDelivery = typeof WebhookDelivery.static;

export const webhookDelivery = defineQueue("webhook", WebhookDelivery, { run: deliver, settled: afterAttempt });

/** Each append to a stream with a webhook: one delivery job, committed with the append, ordered per note. */
export const webhookOnAppend: AppendHook = {
  appended(deps, { note, line, byteSize, at }) {
    // Nothing to wait for without a webhook: the append goes on without a pause (modules/streams/append/maybe-promise.ts).
    if (!note.webhookUrl || note.webhookStatus !== "enabled") return undefined;
    const payload: WebhookDelivery = { deliveryId: newId("dlv"), noteId: note.id, createdAt: iso(at), text: line, byteSize, updatedAt: iso(at) };
    return webhookDelivery.enqueue(deps, payload, { serialKey: note.id });
  },
};

/** Inside the write that raises an alert: the same alert to the stream's webhook, when it asks for them. */
export async function enqueueAlertDelivery(deps: Deps, note: Pick<NoteRow, "id" | "webhookUrl" | "webhookStatus" | "alertWebhook" | "byteSize">, text: string, now: number): Promise<void> {
  if (!note.alertWebhook || !note.webhookUrl || note.webhookStatus !== "enabled") return;
  const payload: WebhookDelivery = { deliveryId: newId("dlv"), noteId: note.id, createdAt: iso(now), text, byteSize: note.byteSize, updatedAt: iso(now), event: "note.alert" };
  await webhookDelivery.enqueue(deps, payload, { serialKey: note.id });
}

/** One attempt: shape, sign, check the target, POST, then record it and count failures. */
async function deliver(deps: Deps, p: WebhookDelivery, job: { attempts: number }): Promise<JobOutcome | InWriteOutcome> {
  const [note] = await deps.db.select().from(notes).where(eq(notes.id, p.noteId));
  // A test may go to a disabled webhook: it is how a fixed receiver is checked before re-arming.
  const usable = note?.webhookStatus === "enabled" || (p.event === "webhook.test" && note?.webhookStatus === "disabled");
  if (!note || note.trashedAt !== null || !note.webhookUrl || !note.webhookSecret || !usable) {
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
      type: p.event,
    }),
  );
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    ...signatureHeaders(note.webhookSecret, p.deliveryId, body, Math.floor(deps.clock.now() / 1000)),
  };
  const result = await guardedPost(deps, url, body, headers);
  // Recorded in the same write that settles the job.
  return () => recordAttempt(deps, note.id, p.deliveryId, job.attempts, note.webhookUrl!, result, p.event === "webhook.test");
}

async function recordAttempt(deps: Deps, noteId: string, deliveryId: string, attempt: number, url: string, r: PostResult, test = false): Promise<JobOutcome> {
  if (test) return recordTestAttempt(deps, noteId, deliveryId, attempt, url, r);
  const [current] = await deps.db.select({ failures: notes.webhookFailures, status: notes.webhookStatus }).from(notes).where(eq(notes.id, noteId));
  const ok = succeeded(r);
  const gone = r.status === 410;
  const failures = ok ? 0 : (current?.failures ?? 0) + 1;
  const disable = !ok && (gone || failures >= DISABLE_AFTER);
  const error = ok ? null : attemptError(r);
  await deps.db
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
    });
  // Only a change is written: under load most attempts succeed with no failures to reset, and an
  // update would lock the note's row against the appends of other instances for nothing.
  if (current && (current.failures !== failures || disable)) {
    await deps.db
      .update(notes)
      .set({ webhookFailures: failures, ...(disable ? { webhookStatus: "disabled" as const } : {}) })
      .where(eq(notes.id, noteId));
  }
  if (ok) return { ok: true };
  if (disable) {
    await webhookDelivery.cancelSerial(deps, noteId, "webhook disabled");
    await mailOwnerAboutDisable(deps, noteId, url, gone ? "the receiver answered 410 Gone" : `${failures} deliveries in a row failed (last: ${error})`);
    return { fail: error! };
  }
  return { retry: error!, delayMs: retryAfterMs(r) };
}

/**
 * A test shows its result in the deliveries list and nowhere else: it is tried once, and neither
 * counts towards disabling the webhook nor re-arms it (only saving the webhook does).
 */
async function recordTestAttempt(deps: Deps, noteId: string, deliveryId: string, attempt: number, url: string, r: PostResult): Promise<JobOutcome> {
  const ok = succeeded(r);
  const error = ok ? null : attemptError(r);
  await deps.db
    .insert(webhookAttempts)
    .values({ noteId, deliveryId, attempt, at: deps.clock.now(), url, statusCode: r.status, durationMs: r.durationMs, error, response: r.body || null, disabled: false });
  return ok ? { ok: true } : { fail: error! };
}

async function mailOwnerAboutDisable(deps: Deps, noteId: string, url: string, reason: string): Promise<void> {
  const [n] = await deps.db
    .select({ title: notes.title, filename: notes.filename, email: accounts.email })
    .from(notes)
    .innerJoin(workspaces, eq(workspaces.id, notes.workspaceId))
    .innerJoin(accounts, eq(accounts.id, workspaces.ownerId))
    .where(eq(notes.id, noteId));
  if (n) await enqueueMail(deps, webhookDisabled({ to: n.email, noteTitle: n.title, filename: n.filename, url, reason }));
}

/**
 * Once an attempt's outcome has committed: its count, and a log line for a failure. The line
 * names the note, the delivery and the receiver's host only: a webhook URL may carry a secret
 * in its path or query (Slack's do), and the signing secret never leaves the note.
 */
async function afterAttempt(deps: Deps, p: WebhookDelivery, job: JobRow, s: Settled): Promise<void> {
  const counts = deps.metrics.webhookDeliveries;
  if (s.status === "done") return counts.delivered.inc();
  (s.status === "retry" ? counts.retry : counts.failed).inc();
  // The attempt just recorded (none when the webhook was gone before it was tried).
  const [last] = await deps.db
    .select({ url: webhookAttempts.url, disabled: webhookAttempts.disabled })
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.noteId, p.noteId), eq(webhookAttempts.deliveryId, p.deliveryId), eq(webhookAttempts.attempt, job.attempts)))
    .orderBy(desc(webhookAttempts.id))
    .limit(1);
  const host = last && URL.canParse(last.url) ? new URL(last.url).host : null;
  const fields = { note_id: p.noteId, delivery_id: p.deliveryId, attempt: job.attempts, host, error: withoutUrl(s.error, last?.url, host) };
  if (s.status === "retry") logEvent("warn", "webhook delivery failed, will retry", { ...fields, next_attempt_at: iso(s.runAt) });
  else if (last?.disabled) {
    deps.metrics.webhooksDisabled.inc();
    logEvent("warn", "webhook disabled", fields);
  } else logEvent("warn", "webhook delivery given up", fields);
}

/** An error that quotes the URL, its path or its query (none of ours should) shows the host instead. */
function withoutUrl(error: string, url: string | undefined, host: string | null): string {
  if (!url || !host || !URL.canParse(url)) return error;
  const { pathname, search } = new URL(url);
  let out = error.split(url).join(host);
  for (const part of [search, pathname]) if (part.length > 1) out = out.split(part).join("…");
  return out;
}

/** What a failed attempt's `error` says: the socket's or guard's words, else the answer's status. */
export function attemptError(r: PostResult): string {
  return r.error ?? (r.status !== null && r.status >= 300 && r.status < 400 ? `redirect ${r.status} not followed` : `HTTP ${r.status}`);
}
