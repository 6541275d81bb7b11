import { eq } from "drizzle-orm";
import { t } from "elysia";
import type { Deps } from "../../deps";
import type { Principal } from "../../principal";
import { inboxDeliveries, notes } from "../../db/tables";
import { AppError, CapExceeded } from "../../http/errors";
import { defineQueue } from "../../jobs/define-queue";
import type { JobOutcome } from "../../jobs/runner";
import { logEvent } from "../../http/log";
import { iso } from "../../lib/clock";
import { appendTo } from "../streams/append/service";
import { payloadSummary } from "./line";
import { inboxLine } from "./summarise";

/** The worker writes with the rights of the note's own workspace, pinned to that note. */
function inboxPrincipal(note: { id: string; workspaceId: string }): Principal {
  return {
    tokenId: "inbox",
    accountId: "inbox",
    workspaceId: note.workspaceId,
    scopes: new Set(["append"]),
    noteId: note.id,
    kind: "api",
    rate: null,
    validUntil: Infinity,
  };
}

/** One payload received at /h/{token} and stored in inbox_deliveries, to become a line. */
const InboxPayload = t.Object({ deliveryId: t.String() });
type InboxPayload = typeof InboxPayload.static;

export const inboxQueue = defineQueue("inbox", InboxPayload, {
  // All of it happens in the write that settles the job: the line, its webhook job, the bookkeeping.
  run: async (deps, { deliveryId }) => () => processDelivery(deps, deliveryId),
  onFailed: async (deps, { deliveryId }, error) => {
    await deps.db.update(inboxDeliveries).set({ status: "dead", lastError: error.slice(0, 1000) }).where(eq(inboxDeliveries.id, deliveryId));
  },
  settled: async (deps, { deliveryId }, _job, s) => {
    const counts = deps.metrics.inboxPayloads;
    if (s.status !== "failed") return (s.status === "done" ? counts.delivered : counts.retry).inc();
    counts.dead.inc();
    const [d] = await deps.db.select({ noteId: inboxDeliveries.noteId }).from(inboxDeliveries).where(eq(inboxDeliveries.id, deliveryId));
    logEvent("warn", "inbox payload dead-lettered", { note_id: d?.noteId ?? null, delivery_id: deliveryId, reason: loggedReason(s.error) });
  },
});

const UNEXPECTED = "could not turn the payload into a line";

/** The reason for the log: an unexpected exception's own text stays in the dead letter (it might quote the payload). */
function loggedReason(error: string): string {
  return error.startsWith(UNEXPECTED) ? `${UNEXPECTED} (an unexpected error; the dead letter has its text)` : error.slice(0, 500);
}

/** One attempt, in one write: summarise, append (with its own webhook job), mark delivered. */
async function processDelivery(deps: Deps, deliveryId: string): Promise<JobOutcome> {
  const [d] = await deps.db.select().from(inboxDeliveries).where(eq(inboxDeliveries.id, deliveryId));
  if (!d || d.status !== "pending") return { ok: true };
  await deps.db.update(inboxDeliveries).set({ attempts: d.attempts + 1 }).where(eq(inboxDeliveries.id, d.id));
  const [note] = await deps.db.select().from(notes).where(eq(notes.id, d.noteId));
  if (!note || note.trashedAt !== null) return { fail: "the stream is gone (deleted, or in the trash: restore it, then replay)" };
  try {
    // Nested: a failure undoes the append's rows and the lines and counters it left in the
    // writer's overlay, and the attempt count above stands.
    return await deps.writer.nested(() => deliverLine(deps, d, note));
  } catch (e) {
    // The cause that passes by itself (a full workspace) comes back as a retry; an exception
    // is a fault the same stored bytes would meet at every retry, for hours, while the inbox's
    // later payloads wait behind it (one note's jobs run in order). Dead-letter it now, with the
    // reason; a replay tries again once the cause is gone.
    return { fail: `${UNEXPECTED}: ${String((e as Error)?.message ?? e)}` };
  }
}

type DeliveryRow = typeof inboxDeliveries.$inferSelect;

function permanentReason(e: AppError): string {
  if (e instanceof CapExceeded) return `the stream is full (retention reject); set retention or free space, then replay: ${e.message}`;
  if (e.code === "account_read_only") return `the account is read-only; once it can write again, replay: ${e.message}`;
  return `${e.code}: ${e.message}`;
}

async function deliverLine(deps: Deps, d: DeliveryRow, note: typeof notes.$inferSelect): Promise<JobOutcome> {
  const line = inboxLine(iso(d.receivedAt), payloadSummary(note.inboxTemplate, d.contentType, JSON.parse(d.headers), d.body)) + "\n";
  try {
    await appendTo({ deps, principal: inboxPrincipal(note) }, note, line);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    // A full workspace frees itself in time (stored bodies are pruned, the trash is purged):
    // retried, then dead-lettered.
    if (e instanceof CapExceeded && (e.details as { cap?: string }).cap === "storage") {
      await deps.db.update(inboxDeliveries).set({ lastError: e.message }).where(eq(inboxDeliveries.id, d.id));
      return { retry: e.message };
    }
    // Anything else waits for the owner (a full stream under retention reject, a locked note, a
    // read-only account): retrying would only hold the inbox's later payloads for hours. Dead
    // at once, with the reason; a replay tries again once the cause is gone.
    return { fail: permanentReason(e) };
  }
  await deps.db
    .update(inboxDeliveries)
    .set({ status: "delivered", line: line.trimEnd(), deliveredAt: deps.clock.now(), lastError: null })
    .where(eq(inboxDeliveries.id, d.id));
  return { ok: true };
}
