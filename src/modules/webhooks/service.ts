import { desc, eq } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { paged } from "../../db/paged";
import { webhookAttempts } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import type { Page } from "../../lib/pagination";
import { visibleNote, type NoteRow } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { webhookDelivery } from "./delivery";
import type { WebhookFormat } from "./formats";
import { newWebhookSecret } from "./sign";
import { urlProblem } from "./target";

/**
 * The webhook part of a PATCH, inside its write: a URL is checked and gets a secret the first
 * time; null removes the webhook; any save re-arms a disabled webhook.
 */
export async function webhookChanges(
  deps: Deps,
  note: NoteRow,
  input: { webhook_url?: string | null; webhook_format?: WebhookFormat },
): Promise<Partial<NoteRow>> {
  const touches = input.webhook_url !== undefined || input.webhook_format !== undefined;
  if (touches && note.kind !== "stream") {
    throw ValidationFailed.field("note.webhook_url", "not_a_stream", "outbound webhooks belong to streams (append-only notes)");
  }
  const changes: Partial<NoteRow> = {};
  if (note.webhookStatus === "disabled") Object.assign(changes, { webhookStatus: "enabled", webhookFailures: 0 });
  if (input.webhook_format !== undefined) changes.webhookFormat = input.webhook_format;
  if (input.webhook_url === null) {
    Object.assign(changes, { webhookUrl: null, webhookStatus: "none", webhookFailures: 0 });
    await webhookDelivery.cancelSerial(deps, note.id, "webhook removed");
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

export async function listWebhookAttempts({ ctx, noteId, page }: { ctx: Ctx; noteId: string; page: Page }) {
  requireScope(ctx, "read");
  const note = await visibleNote(ctx, noteId);
  const where = eq(webhookAttempts.noteId, note.id);
  const rows = ctx.deps.db.select().from(webhookAttempts).where(where).orderBy(desc(webhookAttempts.id));
  const { items, total } = await paged(ctx.deps.db, { from: webhookAttempts, where, rows, page });
  return {
    total,
    webhookStatus: note.webhookStatus,
    items: items.map((r) => ({
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
