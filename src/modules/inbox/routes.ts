import { Elysia, t } from "elysia";
import { publicOrigin } from "../../http/origin";
import type { Deps } from "../../deps";
import { listAnswer, PageQuery } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { send } from "../../http/reply";
import { NoteIdParams } from "../notes/model";
import { previewInboxLine } from "./preview";
import * as inbox from "./service";

const detail = (summary: string) => ({ detail: { tags: ["inbox"], summary } });

const InboxDelivery = t.Object({
  id: t.String({ description: "ibx_…" }),
  received_at: t.String({ format: "date-time" }),
  status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("dead")]),
  attempts: t.Integer(),
  content_type: t.Nullable(t.String()),
  bytes: t.Integer(),
  last_error: t.Nullable(t.String()),
  line: t.Nullable(t.String({ description: "The line appended to the note, once delivered" })),
  delivered_at: t.Nullable(t.String({ format: "date-time" })),
}, { $id: "#/components/schemas/InboxDelivery" });

const InboxPreviewBody = t.Object(
  {
    payload: t.Unknown({ description: "Any JSON, as a sender would POST it; a string stands for a plain-text body" }),
    template: t.Optional(t.String({ description: "The template to try (at most 2,000 characters); absent: the stream's own; \"\" or neither: the built-in summary" })),
  },
  { $id: "#/components/schemas/InboxPreviewRequest" },
);

/** Managing a stream's inbox, under /api/v1. */
export const inboxRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .post(
      "/notes/:id/inbox",
      async ({ ctx, params, request }) => send(await inbox.rotateInbox({ ctx, noteId: params.id, baseUrl: publicOrigin(ctx.deps, request) })),
      {
        params: NoteIdParams,
        response: { 201: t.Object({ inbox_url: t.String(), token: t.String() }, { $id: "#/components/schemas/Inbox" }) },
        ...detail("Create or rotate the inbox URL of a stream; the old URL stops working at once"),
      },
    )
    .delete("/notes/:id/inbox", async ({ ctx, params }) => send(await inbox.disableInbox({ ctx, noteId: params.id })), {
      params: NoteIdParams,
      response: { 200: t.Object({ id: t.String(), inbox_enabled: t.Literal(false) }) },
      ...detail("Disable the inbox"),
    })
    .get(
      "/notes/:id/inbox/deliveries",
      ({ ctx, params, query, request, set }) =>
        listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) =>
          inbox.listInboxDeliveries({ ctx, noteId: params.id, status: query.status, page }),
        ),
      {
        params: NoteIdParams,
        query: t.Object({
          status: t.Optional(t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("dead")])),
          ...PageQuery,
        }),
        response: { 200: t.Array(InboxDelivery) },
        ...detail("Payloads received by the inbox, newest first; status=dead is the dead-letter view"),
      },
    )
    .post(
      "/notes/:id/inbox/preview",
      ({ ctx, params, body }) => previewInboxLine({ ctx, noteId: params.id, payload: body.payload, template: body.template }),
      {
        params: NoteIdParams,
        body: InboxPreviewBody,
        response: { 200: t.Object({ line: t.String({ description: "The line, time stamp first, the payload would become if received now" }) }, { $id: "#/components/schemas/InboxPreview" }) },
        ...detail("Preview the line a payload becomes, with a template, the stream's own, or the built-in summary; writes nothing (read scope)"),
      },
    )
    .post(
      "/notes/:id/inbox/deliveries/:delivery_id/replay",
      async ({ ctx, params }) => send(await inbox.replayDelivery({ ctx, noteId: params.id, deliveryId: params.delivery_id })),
      {
        params: t.Object({ id: t.String(), delivery_id: t.String() }),
        response: { 200: t.Object({ id: t.String(), status: t.Literal("pending") }) },
        ...detail("Re-queue a dead-lettered payload"),
      },
    );

/** POST /h/{token}: any body, any content type, no auth header; the token in the URL is the credential. */
export const inboxReceiveRoutes = (deps: Deps) =>
  new Elysia().post(
    "/h/:token",
    async ({ params, request, set }) => {
      const r = await inbox.receive(deps, params.token, request);
      set.status = 202;
      return r;
    },
    { parse: "none", detail: { hide: true } },
  );
