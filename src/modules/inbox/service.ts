import { and, count, desc, eq, isNull, type SQL } from "drizzle-orm";
import type { Ctx, Deps, Principal } from "../../deps";
import { inboxDeliveries, notes } from "../../db/schema";
import { commit, type Reply } from "../../db/commit";
import { AppError, CapExceeded, Conflict, NotFound, ValidationFailed } from "../../http/errors";
import { enqueue, type JobRow } from "../../jobs/queue";
import type { JobHandler, JobOutcome } from "../../jobs/runner";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { visibleNote } from "../notes/repo";
import { writableWorkspace } from "../notes/service";
import { appendTo } from "../streams/service";
import { requireScope, requireUnpinned } from "../tokens/service";
import { inboxLine, summarise } from "./summarise";

export const INBOX_QUEUE = "inbox";
export const INBOX_TOKEN_PREFIX = "inb_";
/** Payloads a minute one inbox accepts. */
export const INBOX_PER_MINUTE = 120;
/** Request headers kept with a payload: enough to tell the sender, never credentials. */
const KEPT_HEADERS = ["content-type", "user-agent", "x-github-event", "x-gitlab-event", "sentry-hook-resource", "x-event-key"];

/** Creates or rotates a stream's inbox: the old URL stops working at once. 32 base62 characters ≈ 190 bits. */
export async function rotateInbox({ ctx, noteId, baseUrl }: { ctx: Ctx; noteId: string; baseUrl: string }): Promise<Reply<{ inbox_url: string; token: string }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage inboxes");
  const token = INBOX_TOKEN_PREFIX + randomBase62(32);
  return commit(ctx, 201, () => {
    const note = visibleNote(ctx, noteId);
    if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", "an inbox appends to a stream; this note is editable");
    writableWorkspace(ctx);
    ctx.deps.db.update(notes).set({ inboxTokenHash: sha256Hex(token) }).where(eq(notes.id, note.id)).run();
    return { inbox_url: `${baseUrl}/h/${token}`, token };
  });
}

export async function disableInbox({ ctx, noteId }: { ctx: Ctx; noteId: string }): Promise<Reply<{ id: string; inbox_enabled: false }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage inboxes");
  return commit(ctx, 200, () => {
    const note = visibleNote(ctx, noteId);
    ctx.deps.db.update(notes).set({ inboxTokenHash: null }).where(eq(notes.id, note.id)).run();
    return { id: note.id, inbox_enabled: false as const };
  });
}

/**
 * POST /h/{token}: stores the raw request durably, then answers. A job turns it into a line,
 * so a momentary failure never loses a payload.
 */
export async function receive(deps: Deps, token: string, request: Request): Promise<{ ok: true; id: string }> {
  if (!token.startsWith(INBOX_TOKEN_PREFIX)) throw new NotFound("inbox");
  const hash = sha256Hex(token);
  const limit = deps.limiter.consume(`inbox:${hash}`, INBOX_PER_MINUTE, "anonymous");
  if (!limit.allowed) {
    throw new AppError("rate_limited", `this inbox accepts ${INBOX_PER_MINUTE} payloads a minute`, undefined, {
      "retry-after": String(Math.max(1, Math.ceil(limit.reset - deps.clock.now() / 1000))),
    });
  }
  const body = Buffer.from(await request.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const v = request.headers.get(name);
    if (v !== null) headers[name] = v.slice(0, 500);
  }
  return deps.writer.write(() => {
    const note = deps.db
      .select({ id: notes.id })
      .from(notes)
      .where(and(eq(notes.inboxTokenHash, hash), isNull(notes.trashedAt)))
      .get();
    if (!note) throw new NotFound("inbox");
    const id = newId("ibx");
    deps.db
      .insert(inboxDeliveries)
      .values({ id, noteId: note.id, receivedAt: deps.clock.now(), contentType: headers["content-type"] ?? null, headers: JSON.stringify(headers), body })
      .run();
    enqueue(deps, INBOX_QUEUE, { deliveryId: id }, { serialKey: `inbox:${note.id}` });
    return { ok: true as const, id };
  });
}

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

export const inboxHandler: JobHandler = {
  // All of it happens in the write that settles the job: the line, its webhook job, the bookkeeping.
  run: async (deps, job) => () => processDelivery(deps, job),
  onFailed: (deps, job, error) => {
    const { deliveryId } = JSON.parse(job.payload) as { deliveryId: string };
    deps.db.update(inboxDeliveries).set({ status: "dead", lastError: error.slice(0, 1000) }).where(eq(inboxDeliveries.id, deliveryId)).run();
  },
};

/** One attempt, in one write: summarise, append (with its own webhook job), mark delivered. */
function processDelivery(deps: Deps, job: JobRow): JobOutcome {
  const { deliveryId } = JSON.parse(job.payload) as { deliveryId: string };
  const d = deps.db.select().from(inboxDeliveries).where(eq(inboxDeliveries.id, deliveryId)).get();
  if (!d || d.status !== "pending") return { ok: true };
  deps.db.update(inboxDeliveries).set({ attempts: d.attempts + 1 }).where(eq(inboxDeliveries.id, d.id)).run();
  const note = deps.db.select().from(notes).where(eq(notes.id, d.noteId)).get();
  if (!note || note.trashedAt !== null) return { fail: "the note no longer exists" };
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

export function listInboxDeliveries({
  ctx,
  noteId,
  status,
  page,
}: {
  ctx: Ctx;
  noteId: string;
  status?: "pending" | "delivered" | "dead";
  page: Page;
}) {
  requireScope(ctx, "read");
  const note = visibleNote(ctx, noteId);
  const conds: SQL[] = [eq(inboxDeliveries.noteId, note.id)];
  if (status) conds.push(eq(inboxDeliveries.status, status));
  const where = and(...conds);
  const total = ctx.deps.db.select({ n: count() }).from(inboxDeliveries).where(where).get()!.n;
  const rows = ctx.deps.db
    .select()
    .from(inboxDeliveries)
    .where(where)
    .orderBy(desc(inboxDeliveries.receivedAt), desc(inboxDeliveries.id))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  return {
    total,
    items: rows.map((r) => ({
      id: r.id,
      received_at: iso(r.receivedAt),
      status: r.status,
      attempts: r.attempts,
      content_type: r.contentType,
      bytes: r.body.length,
      last_error: r.lastError,
      line: r.line,
      delivered_at: r.deliveredAt === null ? null : iso(r.deliveredAt),
    })),
  };
}

/** Re-queues a dead-lettered payload (one click in the dead-letter view). */
/** Delivered payloads are kept 7 days, dead letters 30 days, then their raw bodies go. */
export function pruneInboxDeliveries(deps: Deps): number {
  const now = deps.clock.now();
  return deps.db.$client.run(
    "DELETE FROM inbox_deliveries WHERE (status = 'delivered' AND delivered_at < ?) OR (status = 'dead' AND received_at < ?)",
    [now - 7 * 86_400_000, now - 30 * 86_400_000],
  ).changes;
}

export async function replayDelivery({ ctx, noteId, deliveryId }: { ctx: Ctx; noteId: string; deliveryId: string }) {
  requireScope(ctx, "write");
  return commit(ctx, 200, () => {
    const note = visibleNote(ctx, noteId);
    const d = ctx.deps.db
      .select({ id: inboxDeliveries.id, status: inboxDeliveries.status })
      .from(inboxDeliveries)
      .where(and(eq(inboxDeliveries.id, deliveryId), eq(inboxDeliveries.noteId, note.id)))
      .get();
    if (!d) throw new NotFound("inbox delivery");
    if (d.status !== "dead") throw new Conflict(`only dead deliveries are replayed; this one is ${d.status}`);
    ctx.deps.db.update(inboxDeliveries).set({ status: "pending", attempts: 0, lastError: null }).where(eq(inboxDeliveries.id, d.id)).run();
    enqueue(ctx.deps, INBOX_QUEUE, { deliveryId: d.id }, { serialKey: `inbox:${note.id}` });
    return { id: d.id, status: "pending" as const };
  });
}
