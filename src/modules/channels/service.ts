import { and, asc, count, eq, like, ne, or } from "drizzle-orm";
import type { Deps } from "../../deps";
import type { Ctx } from "../../deps";
import { mayNameRow } from "../../db/keys";
import { paged } from "../../db/paged";
import { channels, notes } from "../../db/tables";
import { commit } from "../../http/commit";
import { CapExceeded, Conflict, NotFound, ValidationFailed } from "../../http/errors";
import type { Reply } from "../../http/reply";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/pagination";
import { charLength, hasLoneSurrogate, stripControl } from "../../lib/text";
import { nextFollowUp } from "../deadman/spell";
import { writableWorkspace } from "../notes/service";
import { requireScope, requireUnpinned } from "../tokens/service";
import { newWebhookSecret } from "../webhooks/sign";
import { urlProblem } from "../webhooks/target";
import { enqueueChannelMessage, type ChannelRow } from "./delivery";
import { CHANNEL_NAME_MAX_CHARS, MAX_CHANNELS, type ChannelInput, type ChannelRecord } from "./model";
import { withoutChannel } from "./notify";
import { ChannelUrlProblem, maskedUrl, parseChannelUrl, type Target } from "./url";

function toChannelRecord(row: ChannelRow): ChannelRecord {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    url: maskedUrl(parseChannelUrl(row.url, row.format)),
    format: row.format,
    status: row.status,
    failures: row.failures,
    last_error: row.lastError,
    last_attempt_at: row.lastAttemptAt === null ? null : iso(Number(row.lastAttemptAt)),
    created_at: iso(Number(row.createdAt)),
    updated_at: iso(Number(row.updatedAt)),
  };
}

function cleanName(raw: string): string {
  const name = stripControl(raw).trim();
  if (name === "") throw ValidationFailed.field("channel.name", "blank", "a channel's name must not be empty");
  if (charLength(name) > CHANNEL_NAME_MAX_CHARS || hasLoneSurrogate(name)) {
    throw ValidationFailed.field("channel.name", "too_long", `a channel's name is 1 to ${CHANNEL_NAME_MAX_CHARS} characters of valid Unicode`);
  }
  return name;
}

/** The URL read and checked: its kind, and a host of its own that is a public address (or an allowed range). */
function checkedTarget(ctx: Ctx, url: string, format: ChannelInput["format"]): Target {
  let target: Target;
  try {
    target = parseChannelUrl(url, format ?? "generic");
  } catch (e) {
    if (e instanceof ChannelUrlProblem) throw ValidationFailed.field("channel.url", "invalid", `url ${e.message}`);
    throw e;
  }
  if (target.kind !== "webhook" && format !== undefined && format !== "generic") {
    throw ValidationFailed.field("channel.format", "not_applicable", "format applies to https:// channels; the other kinds speak their provider's own API");
  }
  // The user's own server, for the address guard: Telegram's and Pushover's API origins are the
  // server's settings, not the user's to point anywhere, and mail has none.
  const own = target.kind === "webhook" ? target.url : "base" in target ? target.base : null;
  const problem = own === null ? null : urlProblem(ctx.deps, own);
  if (problem) throw ValidationFailed.field("channel.url", "refused", `url ${problem}`);
  return target;
}

async function visibleChannel(ctx: Ctx, id: string): Promise<ChannelRow> {
  if (!mayNameRow(id)) throw new NotFound("channel");
  const [row] = await ctx.deps.db
    .select()
    .from(channels)
    .where(and(eq(channels.id, id), eq(channels.workspaceId, ctx.principal.workspaceId)));
  if (!row) throw new NotFound("channel");
  return row;
}

async function assertNameFree(ctx: Ctx, name: string, exceptId?: string): Promise<void> {
  const conds = [eq(channels.workspaceId, ctx.principal.workspaceId), eq(channels.name, name)];
  if (exceptId) conds.push(ne(channels.id, exceptId));
  const [taken] = await ctx.deps.db.select({ id: channels.id }).from(channels).where(and(...conds)).limit(1);
  if (taken) throw new Conflict(`a channel named "${name}" already exists`);
}

/** The workspace's channels, oldest first. */
export async function listChannels({ ctx, page }: { ctx: Ctx; page: Page }): Promise<{ items: ChannelRecord[]; total: number }> {
  requireScope(ctx, "read");
  requireUnpinned(ctx, "list channels");
  const { db } = ctx.deps;
  const where = eq(channels.workspaceId, ctx.principal.workspaceId);
  const rows = db.select().from(channels).where(where).orderBy(asc(channels.createdAt), asc(channels.id));
  const { items, total } = await paged(db, { from: channels, where, rows, page });
  return { items: items.map(toChannelRecord), total };
}

/** The names of the workspace's channels turned off after failed deliveries, oldest first (the board's notice, on every poll). */
export async function disabledChannelNames(deps: Deps, workspaceId: string): Promise<string[]> {
  const rows = await deps.db
    .select({ name: channels.name })
    .from(channels)
    .where(and(eq(channels.workspaceId, workspaceId), eq(channels.status, "disabled")))
    .orderBy(asc(channels.createdAt), asc(channels.id));
  return rows.map((r) => r.name);
}

export async function getChannel({ ctx, id }: { ctx: Ctx; id: string }): Promise<ChannelRecord> {
  requireScope(ctx, "read");
  requireUnpinned(ctx, "read channels");
  return toChannelRecord(await visibleChannel(ctx, id));
}

export async function createChannel({ ctx, input }: { ctx: Ctx; input: ChannelInput }): Promise<Reply<ChannelRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage channels");
  if (input.name === undefined) throw ValidationFailed.field("channel.name", "required", "a channel needs a name");
  const url = input.url?.trim();
  if (url === undefined) throw ValidationFailed.field("channel.url", "required", "a channel needs a url");
  const name = cleanName(input.name);
  const target = checkedTarget(ctx, url, input.format);
  return commit(ctx, 201, async () => {
    const ws = await writableWorkspace(ctx);
    const [{ used }] = (await ctx.deps.db.select({ used: count() }).from(channels).where(eq(channels.workspaceId, ws.id))) as [{ used: number }];
    if (used >= MAX_CHANNELS) throw new CapExceeded("channels", MAX_CHANNELS, used, `a workspace may have ${MAX_CHANNELS} channels; delete one first`);
    await assertNameFree(ctx, name);
    const now = ctx.deps.clock.now();
    const row: ChannelRow = {
      id: newId("chn"),
      workspaceId: ws.id,
      name,
      kind: target.kind,
      url,
      format: target.kind === "webhook" ? target.format : "generic",
      secret: target.kind === "webhook" ? newWebhookSecret() : null,
      status: "enabled",
      failures: 0,
      lastError: null,
      lastAttemptAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await ctx.deps.db.insert(channels).values(row);
    return toChannelRecord(row);
  });
}

/** PATCH: a new name, URL or format; any save re-enables a disabled channel and clears its failures. */
export async function updateChannel({ ctx, id, input }: { ctx: Ctx; id: string; input: ChannelInput }): Promise<Reply<ChannelRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage channels");
  return commit(ctx, 200, async () => {
    await writableWorkspace(ctx);
    const row = await visibleChannel(ctx, id);
    const changes: Partial<ChannelRow> = { status: "enabled", failures: 0, updatedAt: ctx.deps.clock.now() };
    if (input.name !== undefined) {
      changes.name = cleanName(input.name);
      await assertNameFree(ctx, changes.name, row.id);
    }
    if (input.url !== undefined || input.format !== undefined) {
      const url = input.url?.trim() ?? row.url;
      const target = checkedTarget(ctx, url, input.format ?? (input.url === undefined ? row.format : undefined));
      Object.assign(changes, { url, kind: target.kind, format: target.kind === "webhook" ? target.format : "generic" });
      if (target.kind === "webhook") changes.secret = row.secret ?? newWebhookSecret();
    }
    await ctx.deps.db.update(channels).set(changes).where(eq(channels.id, row.id));
    return toChannelRecord({ ...row, ...changes });
  });
}

/** DELETE: the channel, its waiting deliveries and its digests go; streams stop naming it. */
export async function deleteChannel({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ id: string; deleted: true }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage channels");
  return commit(ctx, 200, async () => {
    await writableWorkspace(ctx);
    const row = await visibleChannel(ctx, id);
    // The streams that name it, in their notify list or as escalate_to, read once. An escalation to
    // it has nowhere to go: it ends, both its fields with it (one is never set without the other),
    // and the spell's next follow-up is what is left (a repeat, or none).
    const naming = await ctx.deps.db
      .select()
      .from(notes)
      .where(and(eq(notes.workspaceId, row.workspaceId), or(like(notes.notify, `%${row.id}%`), eq(notes.escalateTo, row.id))));
    for (const n of naming) {
      const ended = { escalateTo: null, escalateAfterSeconds: null };
      const escalation = n.escalateTo === row.id ? { ...ended, nextAlertAt: nextFollowUp({ ...n, ...ended }) } : {};
      await ctx.deps.db.update(notes).set({ notify: withoutChannel(n.notify, row.id), ...escalation }).where(eq(notes.id, n.id));
    }
    // Digests sent to it go with it (the foreign key's cascade): a digest is its destination.
    await ctx.deps.db.delete(channels).where(eq(channels.id, row.id));
    return { id: row.id, deleted: true as const };
  });
}

/** POST /channels/{id}/test: one message through the queue, even to a disabled channel; its result lands on the channel. */
export async function testChannel({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ delivery_id: string }>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "manage channels");
  return commit(ctx, 202, async () => {
    const row = await visibleChannel(ctx, id);
    const deliveryId = await enqueueChannelMessage(ctx.deps, row.id, {
      event: "test",
      title: `Test from notestream: ${row.name}`,
      text: `This is a test message to the channel "${row.name}". Alerts and lines you route here will look like this.`,
      note: null,
    });
    return { delivery_id: deliveryId };
  });
}
