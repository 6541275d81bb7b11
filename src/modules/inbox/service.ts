import { and, desc, eq, isNull, lt, or, type SQL } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { inboxDeliveries, notes } from "../../db/tables";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { mayNameRow } from "../../db/keys";
import { paged } from "../../db/paged";
import { AppError, Conflict, NotFound } from "../../http/errors";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { sha256Hex } from "../../lib/secrets";
import { visibleNote, type NoteRow } from "../notes/repo";
import { newStreamSecret, storeStreamSecret } from "../notes/stream-secret";
import { requireScope, requireUnpinned } from "../tokens/service";
import { assertStorage } from "../workspaces/caps";
import { addStorage, getWorkspace, tierOf } from "../workspaces/repo";
import { inboxQueue } from "./queue";
import { storedBytes } from "./storage";

const INBOX_TOKEN_PREFIX = "inb_";
/** Payloads a minute one inbox accepts. */
const INBOX_PER_MINUTE = 120;
/** Payloads a minute all of one workspace's inboxes accept together: more inboxes buy no more room. */
const INBOX_WORKSPACE_PER_MINUTE = 600;
/** Request headers kept with a payload: enough to tell the sender, never credentials. */
const KEPT_HEADERS = ["content-type", "user-agent", "x-github-event", "x-gitlab-event", "sentry-hook-resource", "x-event-key", "x-gitea-event", "x-forgejo-event"];

/** Creates or rotates a stream's inbox: the old URL stops working at once. 32 base62 characters ≈ 190 bits. */
export async function rotateInbox({ ctx, noteId, baseUrl }: { ctx: Ctx; noteId: string; baseUrl: string }): Promise<Reply<{ inbox_url: string; token: string }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage inboxes");
  const token = newStreamSecret(INBOX_TOKEN_PREFIX);
  return commit(ctx, 201, async () => {
    await storeStreamSecret(ctx, noteId, "inboxTokenHash", token, "an inbox appends to a stream; this note is editable");
    return { inbox_url: `${baseUrl}/h/${token}`, token };
  });
}

export async function disableInbox({ ctx, noteId }: { ctx: Ctx; noteId: string }): Promise<Reply<{ id: string; inbox_enabled: false }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage inboxes");
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, noteId);
    await ctx.deps.db.update(notes).set({ inboxTokenHash: null }).where(eq(notes.id, note.id));
    return { id: note.id, inbox_enabled: false as const };
  });
}

/** The live (not trashed) stream an inbox token opens, if any. */
async function inboxNote(deps: Deps, hash: string): Promise<{ id: string; workspaceId: string } | undefined> {
  const [note] = await deps.db
    .select({ id: notes.id, workspaceId: notes.workspaceId })
    .from(notes)
    .where(and(eq(notes.inboxTokenHash, hash), isNull(notes.trashedAt)))
    .limit(1);
  return note;
}

/** Counts one payload against `key`; the 429 to answer when it is over `limit`, else null. */
async function overRate(deps: Deps, key: string, limit: number, message: string): Promise<AppError | null> {
  const d = await deps.limiter.consume(key, limit, "anonymous");
  if (d.allowed) return null;
  return new AppError("rate_limited", message, undefined, {
    "retry-after": String(Math.max(1, Math.ceil(d.reset - deps.clock.now() / 1000))),
  });
}

/**
 * POST /h/{token}: stores the raw request durably, then answers. A job turns it into a line,
 * so a momentary failure never loses a payload. The stored body counts as the workspace's
 * storage until it is pruned, so a payload that would pass the cap is refused before it is kept.
 */
export async function receive(deps: Deps, token: string, request: Request): Promise<{ ok: true; id: string }> {
  if (!token.startsWith(INBOX_TOKEN_PREFIX)) throw new NotFound("inbox");
  const hash = sha256Hex(token);
  const inboxKey = `inbox:${hash}`;
  const perInbox = await overRate(deps, inboxKey, INBOX_PER_MINUTE, `this inbox accepts ${INBOX_PER_MINUTE} payloads a minute`);
  if (perInbox) throw perInbox;
  const target = await inboxNote(deps, hash);
  if (!target) throw new NotFound("inbox");
  const perWorkspace = await overRate(
    deps,
    `inbox-ws:${target.workspaceId}`,
    INBOX_WORKSPACE_PER_MINUTE,
    `this workspace's inboxes accept ${INBOX_WORKSPACE_PER_MINUTE} payloads a minute between them`,
  );
  if (perWorkspace) {
    // Refused for the workspace: this inbox's own minute is not spent on it.
    deps.limiter.refund(inboxKey);
    throw perWorkspace;
  }
  const body = Buffer.from(await request.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const v = request.headers.get(name);
    if (v !== null) headers[name] = v.slice(0, 500);
  }
  return deps.writer.write(async () => {
    // Again inside the write: the inbox may have been rotated or trashed while the body arrived.
    const note = await inboxNote(deps, hash);
    if (!note) throw new NotFound("inbox");
    const ws = await getWorkspace(deps, note.workspaceId);
    assertStorage(ws, tierOf(deps, ws), body.length);
    const id = newId("ibx");
    await deps.db
      .insert(inboxDeliveries)
      .values({ id, noteId: note.id, receivedAt: deps.clock.now(), contentType: headers["content-type"] ?? null, headers: JSON.stringify(headers), body });
    await addStorage(deps, ws.id, body.length);
    await inboxQueue.enqueue(deps, { deliveryId: id }, { serialKey: `inbox:${note.id}` });
    return { ok: true as const, id };
  });
}

export async function listInboxDeliveries({
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
  const note = await visibleNote(ctx, noteId);
  const conds: SQL[] = [eq(inboxDeliveries.noteId, note.id)];
  if (status) conds.push(eq(inboxDeliveries.status, status));
  const where = and(...conds);
  const rows = ctx.deps.db.select().from(inboxDeliveries).where(where).orderBy(desc(inboxDeliveries.receivedAt), desc(inboxDeliveries.id));
  const { items, total } = await paged(ctx.deps.db, { from: inboxDeliveries, where, rows, page });
  return {
    total,
    items: items.map((r) => ({
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

/**
 * Delivered payloads are kept 7 days, dead letters 30 days, then their raw bodies go, and with
 * them the storage they were counted for.
 */
export async function pruneInboxDeliveries(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const expired = or(
    and(eq(inboxDeliveries.status, "delivered"), lt(inboxDeliveries.deliveredAt, now - 7 * 86_400_000)),
    and(eq(inboxDeliveries.status, "dead"), lt(inboxDeliveries.receivedAt, now - 30 * 86_400_000)),
  );
  const freed = await deps.db
    .select({ workspaceId: notes.workspaceId, bytes: storedBytes })
    .from(inboxDeliveries)
    .innerJoin(notes, eq(notes.id, inboxDeliveries.noteId))
    .where(expired)
    .groupBy(notes.workspaceId);
  for (const f of freed) await addStorage(deps, f.workspaceId, -f.bytes);
  const gone = await deps.db.delete(inboxDeliveries).where(expired).returning({ id: inboxDeliveries.id });
  return gone.length;
}

/** A payload of a stream the caller sees (from visibleNote); another stream's is the same 404 as a missing one. */
async function visibleDelivery(ctx: Ctx, note: NoteRow, deliveryId: string): Promise<Pick<typeof inboxDeliveries.$inferSelect, "id" | "status">> {
  if (!mayNameRow(deliveryId)) throw new NotFound("inbox delivery");
  const [row] = await ctx.deps.db
    .select({ id: inboxDeliveries.id, status: inboxDeliveries.status })
    .from(inboxDeliveries)
    .where(and(eq(inboxDeliveries.id, deliveryId), eq(inboxDeliveries.noteId, note.id)));
  if (!row) throw new NotFound("inbox delivery");
  return row;
}

/** Re-queues a dead-lettered payload (one click in the dead-letter view). */
export async function replayDelivery({ ctx, noteId, deliveryId }: { ctx: Ctx; noteId: string; deliveryId: string }) {
  requireScope(ctx, "write");
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, noteId);
    const d = await visibleDelivery(ctx, note, deliveryId);
    if (d.status !== "dead") throw new Conflict(`only dead deliveries are replayed; this one is ${d.status}`);
    await ctx.deps.db.update(inboxDeliveries).set({ status: "pending", attempts: 0, lastError: null }).where(eq(inboxDeliveries.id, d.id));
    await inboxQueue.enqueue(ctx.deps, { deliveryId: d.id }, { serialKey: `inbox:${note.id}` });
    return { id: d.id, status: "pending" as const };
  });
}
