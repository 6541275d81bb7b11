import { eq } from "drizzle-orm";
import { t } from "elysia";
import type { Deps } from "../../deps";
import { accounts, channels, workspaces } from "../../db/tables";
import { mailOrigin } from "../../http/origin";
import { logEvent } from "../../http/log";
import { defineQueue } from "../../jobs/define-queue";
import type { JobRow } from "../../jobs/queue";
import type { InWriteOutcome, JobOutcome, Settled } from "../../jobs/runner";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { enqueueMail } from "../../mail/queue";
import { channelDisabled } from "../../mail/templates";
import { retryAfterMs, type PostResult } from "../webhooks/http";
import { attemptError as webhookAttemptError } from "../webhooks/delivery";
import { guardedPost, succeeded } from "../webhooks/target";
import { providerRequest, type ChannelMessage } from "./providers";
import { maskedUrl, parseChannelUrl } from "./url";

/** Consecutive failed deliveries after which a channel is disabled until it is saved again. */
const CHANNEL_DISABLE_AFTER = 10;

export type ChannelRow = typeof channels.$inferSelect;

const ChannelDelivery = t.Object({
  deliveryId: t.String(),
  channelId: t.String(),
  event: t.Union([t.Literal("alert"), t.Literal("lines"), t.Literal("digest"), t.Literal("test")]),
  title: t.String(),
  text: t.String(),
  createdAt: t.String(),
  note: t.Nullable(t.Object({ id: t.String(), filename: t.Nullable(t.String()), title: t.String() })),
  urgent: t.Optional(t.Boolean()),
});
type ChannelDelivery = typeof ChannelDelivery.static;

export const channelDelivery = defineQueue("channel", ChannelDelivery, { run: deliver, settled: afterAttempt });

/**
 * Inside the caller's write: one message to a channel, through the durable queue. Deliveries to
 * one channel go in order (its serial key); a test goes even to a disabled channel.
 */
export async function enqueueChannelMessage(deps: Deps, channelId: string, m: Omit<ChannelMessage, "deliveryId" | "createdAt">): Promise<string> {
  const deliveryId = newId("dlv");
  await channelDelivery.enqueue(deps, { ...m, deliveryId, channelId, createdAt: iso(deps.clock.now()) }, { serialKey: channelId });
  return deliveryId;
}

async function deliver(deps: Deps, p: ChannelDelivery): Promise<JobOutcome | InWriteOutcome> {
  const [channel] = await deps.db.select().from(channels).where(eq(channels.id, p.channelId));
  if (!channel) return { fail: "the channel was deleted" };
  if (channel.status !== "enabled" && p.event !== "test") return { fail: "the channel is disabled" };
  const sent = await sendToChannel(deps, channel, p);
  return async () => {
    await sent.inWrite?.();
    return recordAttempt(deps, channel, p, sent.result);
  };
}

/**
 * One message to a channel, outside any write: the provider's request through the address guard,
 * or for mailto: a mail, which `inWrite` queues inside the write that settles the delivery.
 */
export async function sendToChannel(deps: Deps, channel: ChannelRow, m: ChannelMessage): Promise<{ result: PostResult; inWrite?: () => Promise<void> }> {
  const target = parseChannelUrl(channel.url, channel.format);
  if (target.kind === "mailto") {
    return { result: { status: 250, headers: {}, body: "", error: null, durationMs: 0 }, inWrite: () => enqueueMail(deps, { to: target.address, subject: `[notestream] ${m.title}`, text: m.text }) };
  }
  const req = providerRequest(target, m, { telegram: deps.config.telegramApiUrl, pushover: deps.config.pushoverApiUrl }, channel.secret, Math.floor(deps.clock.now() / 1000));
  return { result: await guardedPost(deps, req.url, req.body, req.headers, req.method) };
}

/**
 * In the write that settles the attempt: the channel's last result, its count of failures in a
 * row (a success resets it), and at the tenth the channel disabled, its waiting deliveries
 * dropped and the owner mailed, once. A test delivery changes neither the count nor the status.
 */
export async function recordAttempt(deps: Deps, channel: ChannelRow, p: Pick<ChannelDelivery, "event">, r: PostResult): Promise<JobOutcome> {
  const ok = succeeded(r);
  const error = ok ? null : attemptError(r);
  const now = deps.clock.now();
  if (p.event === "test") {
    await deps.db.update(channels).set({ lastError: error, lastAttemptAt: now }).where(eq(channels.id, channel.id));
    return ok ? { ok: true } : { fail: error! };
  }
  const [current] = await deps.db.select({ failures: channels.failures, status: channels.status }).from(channels).where(eq(channels.id, channel.id));
  const failures = ok ? 0 : (current?.failures ?? 0) + 1;
  const disable = !ok && current?.status === "enabled" && failures >= CHANNEL_DISABLE_AFTER;
  await deps.db
    .update(channels)
    .set({ failures, lastError: disable ? `${error}; disabled after ${failures} failures in a row` : error, lastAttemptAt: now, ...(disable ? { status: "disabled" as const } : {}) })
    .where(eq(channels.id, channel.id));
  if (ok) return { ok: true };
  if (disable) {
    await channelDelivery.cancelSerial(deps, channel.id, "channel disabled");
    await mailOwner(deps, channel, `${failures} deliveries in a row failed (last: ${error})`);
    return { fail: error! };
  }
  return { retry: error!, delayMs: retryAfterMs(r) ?? telegramRetryAfterMs(r) };
}

async function mailOwner(deps: Deps, channel: ChannelRow, reason: string): Promise<void> {
  const [owner] = await deps.db
    .select({ email: accounts.email })
    .from(workspaces)
    .innerJoin(accounts, eq(accounts.id, workspaces.ownerId))
    .where(eq(workspaces.id, channel.workspaceId));
  if (owner) {
    await enqueueMail(deps, channelDisabled({ to: owner.email, channelName: channel.name, url: maskedUrl(parseChannelUrl(channel.url, channel.format)), reason, baseUrl: mailOrigin(deps) }));
  }
}

/** Log lines name the channel and its kind, never its URL (tokens live in it). */
function afterAttempt(deps: Deps, p: ChannelDelivery, job: JobRow, s: Settled): void {
  if (s.status === "done") return;
  const fields = { channel_id: p.channelId, delivery_id: p.deliveryId, event: p.event, attempt: job.attempts, error: s.error };
  if (s.status === "retry") logEvent("warn", "channel delivery failed, will retry", { ...fields, next_attempt_at: iso(s.runAt) });
  else logEvent("warn", "channel delivery given up", fields);
}

/** What a failed attempt says: the webhook queue's words, and the provider's own explanation when it gave one. */
function attemptError(r: PostResult): string {
  const base = webhookAttemptError(r);
  if (r.error || r.status === null || r.status < 400) return base;
  // Telegram ({"description"}), Pushover ({"errors": [...]}), Matrix ({"error"}), Gotify ({"errorDescription"}) say why.
  try {
    const body = JSON.parse(r.body) as Record<string, unknown>;
    const said = body.description ?? body.error ?? body.errorDescription ?? (Array.isArray(body.errors) ? body.errors.join("; ") : undefined);
    if (typeof said === "string") return `${base}: ${said.slice(0, 200)}`;
  } catch {
    // Not JSON: the status says enough.
  }
  return base;
}

/** Telegram may say when to try again only in its body: {"parameters": {"retry_after": seconds}}. */
function telegramRetryAfterMs(r: PostResult): number | undefined {
  if (r.status !== 429) return undefined;
  try {
    const seconds = (JSON.parse(r.body) as { parameters?: { retry_after?: unknown } }).parameters?.retry_after;
    return typeof seconds === "number" && seconds >= 0 ? Math.min(seconds, 3600) * 1000 : undefined;
  } catch {
    return undefined;
  }
}
