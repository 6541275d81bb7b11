import { Elysia, t } from "elysia";
import { listAnswer, PageQuery } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { NoteIdParams } from "../notes/model";
import { listWebhookAttempts } from "./service";

const Attempt = t.Object({
  delivery_id: t.String({ description: "dlv_…, the same on every retry (the receiver's dedupe key)" }),
  attempt: t.Integer(),
  at: t.String({ format: "date-time" }),
  url: t.String(),
  status_code: t.Nullable(t.Integer()),
  duration_ms: t.Integer(),
  error: t.Nullable(t.String()),
  response: t.Nullable(t.String({ description: "At most 8 KB of the receiver's answer" })),
  disabled_webhook: t.Boolean({ description: "True on the attempt after which the webhook was disabled" }),
}, { $id: "#/components/schemas/WebhookDelivery" });

export const webhookRoutes = (auth: AnyAuth) =>
  new Elysia().use(auth).get(
    "/notes/:id/webhook/deliveries",
    ({ ctx, params, query, request, set }) =>
      listAnswer(
        { request, query, set, baseUrl: ctx.deps.config.baseUrl },
        (page) => listWebhookAttempts({ ctx, noteId: params.id, page }),
        (list) => ({ "x-webhook-status": list.webhookStatus }),
      ),
    {
      params: NoteIdParams,
      query: t.Object(PageQuery),
      response: { 200: t.Array(Attempt) },
      detail: { tags: ["webhooks"], summary: "Outbound delivery attempts, newest first (X-Webhook-Status tells the webhook's state)" },
    },
  );
