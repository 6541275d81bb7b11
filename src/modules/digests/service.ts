import { and, asc, count, eq, lte } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { mayNameRow } from "../../db/keys";
import { paged } from "../../db/paged";
import { channels, digests } from "../../db/tables";
import { commit } from "../../http/commit";
import { CapExceeded, NotFound, ValidationFailed } from "../../http/errors";
import type { Reply } from "../../http/reply";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { enqueueMail } from "../../mail/queue";
import { isPlausibleEmail, normaliseEmail } from "../accounts/service";
import { enqueueChannelMessage } from "../channels/delivery";
import { canonicalZone, checkedSchedule, nextRunAfter } from "../deadman/schedule";
import { writableWorkspace } from "../notes/service";
import { requireScope, requireUnpinned } from "../tokens/service";
import { composeDigest } from "./compose";
import { MAX_DIGEST_LINES, MAX_DIGEST_STREAMS, MAX_DIGESTS, type DigestInput, type DigestRecord } from "./model";

type DigestRow = typeof digests.$inferSelect;

const streamsOf = (row: Pick<DigestRow, "streams">): "all" | string[] => JSON.parse(row.streams) as "all" | string[];

function toRecord(row: DigestRow): DigestRecord {
  return {
    id: row.id,
    schedule: row.schedule,
    timezone: row.timezone,
    channel_id: row.channelId,
    email: row.email,
    streams: streamsOf(row),
    last_lines: row.lastLines,
    next_run_at: iso(Number(row.nextRunAt)),
    last_sent_at: row.lastSentAt === null ? null : iso(Number(row.lastSentAt)),
    created_at: iso(Number(row.createdAt)),
    updated_at: iso(Number(row.updatedAt)),
  };
}

/** The digest as it would be after this input, checked: schedule and zone, one destination, streams, last_lines. */
async function checked(ctx: Ctx, before: DigestRow | null, input: DigestInput, now: number): Promise<Omit<DigestRow, "id" | "workspaceId" | "createdAt" | "updatedAt" | "lastSentAt">> {
  const timezone = input.timezone === undefined ? (before?.timezone ?? "UTC") : canonicalZone(input.timezone);
  if (timezone === null) throw ValidationFailed.field("digest.timezone", "unknown_zone", "timezone must be an IANA time zone name, such as Europe/Berlin");
  const raw = input.schedule ?? before?.schedule;
  if (raw === undefined) throw ValidationFailed.field("digest.schedule", "required", "a digest needs a schedule, such as 0 8 * * 1-5");
  const schedule = checkedSchedule(raw, timezone, ctx.deps.config.minIntervalSeconds, now, "digest.schedule");
  let channelId = input.channel_id === undefined ? (before?.channelId ?? null) : input.channel_id;
  let email = input.email === undefined ? (before?.email ?? null) : input.email === null ? null : normaliseEmail(input.email);
  // Setting one destination clears the other, as schedule and interval do on a stream.
  if (input.channel_id != null && input.email === undefined) email = null;
  if (input.email != null && input.channel_id === undefined) channelId = null;
  if ((channelId === null) === (email === null)) throw ValidationFailed.field("digest.channel_id", "required", "a digest goes to exactly one of channel_id or email");
  if (email !== null && !isPlausibleEmail(email)) throw ValidationFailed.field("digest.email", "invalid", "email must be an e-mail address");
  if (channelId !== null) {
    const [known] = await ctx.deps.db.select({ id: channels.id }).from(channels).where(and(eq(channels.id, channelId), eq(channels.workspaceId, ctx.principal.workspaceId)));
    if (!known) throw ValidationFailed.field("digest.channel_id", "unknown_channel", "channel_id must name a channel of this workspace (GET /api/v1/channels)");
  }
  const streams = input.streams ?? (before ? streamsOf(before) : "all");
  if (streams !== "all" && (streams.length === 0 || streams.length > MAX_DIGEST_STREAMS || streams.some((s) => s.length === 0 || s.length > 255))) {
    throw ValidationFailed.field("digest.streams", "invalid", `streams is "all" or 1 to ${MAX_DIGEST_STREAMS} filenames`);
  }
  const lastLines = input.last_lines ?? before?.lastLines ?? 5;
  if (!Number.isInteger(lastLines) || lastLines < 0 || lastLines > MAX_DIGEST_LINES) {
    throw ValidationFailed.field("digest.last_lines", "out_of_range", `last_lines is a whole number from 0 to ${MAX_DIGEST_LINES}`);
  }
  return { schedule, timezone, channelId, email, streams: JSON.stringify(streams), lastLines, nextRunAt: nextRunAfter(schedule, timezone, now)! };
}

async function visibleDigest(ctx: Ctx, id: string): Promise<DigestRow> {
  if (!mayNameRow(id)) throw new NotFound("digest");
  const [row] = await ctx.deps.db.select().from(digests).where(and(eq(digests.id, id), eq(digests.workspaceId, ctx.principal.workspaceId)));
  if (!row) throw new NotFound("digest");
  return row;
}

function guard(ctx: Ctx, scope: "read" | "write"): void {
  requireScope(ctx, scope);
  requireUnpinned(ctx, scope === "read" ? "list digests" : "manage digests");
}

export async function listDigests({ ctx, page }: { ctx: Ctx; page: Page }): Promise<{ items: DigestRecord[]; total: number }> {
  guard(ctx, "read");
  const where = eq(digests.workspaceId, ctx.principal.workspaceId);
  const rows = ctx.deps.db.select().from(digests).where(where).orderBy(asc(digests.createdAt), asc(digests.id));
  const { items, total } = await paged(ctx.deps.db, { from: digests, where, rows, page });
  return { items: items.map(toRecord), total };
}

export async function getDigest({ ctx, id }: { ctx: Ctx; id: string }): Promise<DigestRecord> {
  guard(ctx, "read");
  return toRecord(await visibleDigest(ctx, id));
}

export async function createDigest({ ctx, input }: { ctx: Ctx; input: DigestInput }): Promise<Reply<DigestRecord>> {
  guard(ctx, "write");
  return commit(ctx, 201, async () => {
    const ws = await writableWorkspace(ctx);
    const [{ used }] = (await ctx.deps.db.select({ used: count() }).from(digests).where(eq(digests.workspaceId, ws.id))) as [{ used: number }];
    if (used >= MAX_DIGESTS) throw new CapExceeded("digests", MAX_DIGESTS, used, `a workspace may have ${MAX_DIGESTS} digests; delete one first`);
    const now = ctx.deps.clock.now();
    const row: DigestRow = { id: newId("dgs"), workspaceId: ws.id, ...(await checked(ctx, null, input, now)), lastSentAt: null, createdAt: now, updatedAt: now };
    await ctx.deps.db.insert(digests).values(row);
    return toRecord(row);
  });
}

export async function updateDigest({ ctx, id, input }: { ctx: Ctx; id: string; input: DigestInput }): Promise<Reply<DigestRecord>> {
  guard(ctx, "write");
  return commit(ctx, 200, async () => {
    await writableWorkspace(ctx);
    const row = await visibleDigest(ctx, id);
    const now = ctx.deps.clock.now();
    const changes = { ...(await checked(ctx, row, input, now)), updatedAt: now };
    await ctx.deps.db.update(digests).set(changes).where(eq(digests.id, row.id));
    return toRecord({ ...row, ...changes });
  });
}

export async function deleteDigest({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ id: string; deleted: true }>> {
  guard(ctx, "write");
  return commit(ctx, 200, async () => {
    const row = await visibleDigest(ctx, id);
    await ctx.deps.db.delete(digests).where(eq(digests.id, row.id));
    return { id: row.id, deleted: true as const };
  });
}

/** POST /digests/{id}/send: one digest now, covering what happened since the last; the next scheduled one counts from this. */
export async function sendDigestNow({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<DigestRecord>> {
  guard(ctx, "write");
  return commit(ctx, 202, async () => {
    const row = await visibleDigest(ctx, id);
    return toRecord(await sendDigest(ctx.deps, row, ctx.deps.clock.now()));
  });
}

/** Inside a write: the digest composed and queued to its channel or address; it remembers when, and its next run. */
async function sendDigest(deps: Deps, row: DigestRow, now: number): Promise<DigestRow> {
  const message = await composeDigest(deps, { workspaceId: row.workspaceId, streams: streamsOf(row), lastLines: row.lastLines, timezone: row.timezone }, Number(row.lastSentAt ?? row.createdAt), now);
  if (row.channelId !== null) await enqueueChannelMessage(deps, row.channelId, { event: "digest", title: message.title, text: message.text, note: null });
  else await enqueueMail(deps, { to: row.email!, subject: `[notestream] ${message.title}`, text: message.text });
  const changes = { lastSentAt: now, nextRunAt: nextRunAfter(row.schedule, row.timezone, now) ?? Number.MAX_SAFE_INTEGER };
  await deps.db.update(digests).set(changes).where(eq(digests.id, row.id));
  return { ...row, ...changes };
}

/**
 * The periodic sweep: every digest whose time has come, once. Moving next_run_at on from the
 * value read is the claim, so two instances never send one run twice.
 */
export async function sendDueDigests(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db.select().from(digests).where(lte(digests.nextRunAt, now));
  let sent = 0;
  for (const row of due) {
    const claimed = await deps.db
      .update(digests)
      .set({ nextRunAt: nextRunAfter(row.schedule, row.timezone, now) ?? Number.MAX_SAFE_INTEGER })
      .where(and(eq(digests.id, row.id), eq(digests.nextRunAt, row.nextRunAt)))
      .returning({ id: digests.id });
    if (claimed.length === 0) continue;
    await sendDigest(deps, row, now);
    sent++;
  }
  return sent;
}
