import type { Ctx } from "../../deps";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { randomBase62 } from "../../lib/random";
import { visibleNote } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { webhookDelivery, type WebhookDelivery } from "./delivery";

/**
 * A test delivery's id: `dlv_` and 20 base62 characters like any other, the first four of them
 * "test", so the deliveries list can badge it without a column of its own. (A real id starts so
 * once in 62⁴ ≈ 15 million; it would only be badged "test".)
 */
export const TEST_DELIVERY_PREFIX = "dlv_test";
export const isTestDelivery = (deliveryId: string) => deliveryId.startsWith(TEST_DELIVERY_PREFIX);

/**
 * "Send a test delivery": one delivery of a test payload through the normal path (the same
 * queue, target check, chat format and signature as an append's), its result in the deliveries
 * list. The generic envelope's type is `webhook.test`; nothing is appended to the stream.
 */
export async function sendTestDelivery({ ctx, noteId }: { ctx: Ctx; noteId: string }): Promise<Reply<{ delivery_id: string }>> {
  requireScope(ctx, "write");
  return commit(ctx, 202, async () => {
    const note = await visibleNote(ctx, noteId);
    if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", "outbound webhooks belong to streams (append-only notes)");
    if (!note.webhookUrl) throw ValidationFailed.field("note.webhook_url", "missing", "set a webhook URL first");
    const now = ctx.deps.clock.now();
    const payload: WebhookDelivery = {
      deliveryId: TEST_DELIVERY_PREFIX + randomBase62(16),
      noteId: note.id,
      createdAt: iso(now),
      text: `This is a test delivery from notestream for ${note.filename ?? note.title}: if you can read this, the webhook works.`,
      byteSize: note.byteSize,
      updatedAt: iso(note.updatedAt),
      event: "webhook.test",
    };
    // Tried once, and not queued behind the stream's deliveries: a backlog waiting out its
    // retries would hold the test for hours, and a test that is retried for hours tests nothing.
    await webhookDelivery.enqueue(ctx.deps, payload, { maxAttempts: 1 });
    return { delivery_id: payload.deliveryId };
  });
}
