import { eq } from "drizzle-orm";
import { t } from "elysia";
import type { Deps, Principal } from "../../deps";
import { inboxDeliveries, notes } from "../../db/schema";
import { AppError, CapExceeded } from "../../http/errors";
import { defineQueue } from "../../jobs/define-queue";
import type { JobOutcome } from "../../jobs/runner";
import { iso } from "../../lib/clock";
import { appendTo } from "../streams/service";
import { inboxLine, summarise } from "./summarise";

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
export const InboxPayload = t.Object({ deliveryId: t.String() });
export type InboxPayload = typeof InboxPayload.static;

export const inboxQueue = defineQueue("inbox", InboxPayload, {
  // All of it happens in the write that settles the job: the line, its webhook job, the bookkeeping.
  run: async (deps, { deliveryId }) => () => processDelivery(deps, deliveryId),
  onFailed: (deps, { deliveryId }, error) => {
    deps.db.update(inboxDeliveries).set({ status: "dead", lastError: error.slice(0, 1000) }).where(eq(inboxDeliveries.id, deliveryId)).run();
  },
});

/** One attempt, in one write: summarise, append (with its own webhook job), mark delivered. */
function processDelivery(deps: Deps, deliveryId: string): JobOutcome {
  const d = deps.db.select().from(inboxDeliveries).where(eq(inboxDeliveries.id, deliveryId)).get();
  if (!d || d.status !== "pending") return { ok: true };
  deps.db.update(inboxDeliveries).set({ attempts: d.attempts + 1 }).where(eq(inboxDeliveries.id, d.id)).run();
  const note = deps.db.select().from(notes).where(eq(notes.id, d.noteId)).get();
  if (!note || note.trashedAt !== null) return { fail: "the note no longer exists" };
  try {
    // Nested: a failure undoes the append's rows and the lines and counters it left in the
    // writer's overlay, and the attempt count above stands.
    return deps.writer.nested(() => deliverLine(deps, d, note));
  } catch (e) {
    // The causes that pass (a full note, a read-only account) come back as a retry; an exception
    // is a fault the same stored bytes would meet at every retry, for hours, while the inbox's
    // later payloads wait behind it (one note's jobs run in order). Dead-letter it now, with the
    // reason; a replay tries again once the cause is gone.
    return { fail: `could not turn the payload into a line: ${String((e as Error)?.message ?? e)}` };
  }
}

type DeliveryRow = typeof inboxDeliveries.$inferSelect;

function deliverLine(deps: Deps, d: DeliveryRow, note: typeof notes.$inferSelect): JobOutcome {
  const line = inboxLine(iso(d.receivedAt), summarise(d.contentType, JSON.parse(d.headers), d.body)) + "\n";
  try {
    appendTo({ deps, principal: inboxPrincipal(note) }, note, line);
  } catch (e) {
    // A full note or a read-only account may change when the owner acts: retried, then dead-lettered.
    if (e instanceof CapExceeded || (e instanceof AppError && e.code === "account_read_only")) {
      deps.db.update(inboxDeliveries).set({ lastError: e.message }).where(eq(inboxDeliveries.id, d.id)).run();
      return { retry: e.message };
    }
    if (e instanceof AppError) return { fail: e.message };
    throw e;
  }
  deps.db
    .update(inboxDeliveries)
    .set({ status: "delivered", line: line.trimEnd(), deliveredAt: deps.clock.now(), lastError: null })
    .where(eq(inboxDeliveries.id, d.id))
    .run();
  return { ok: true };
}
