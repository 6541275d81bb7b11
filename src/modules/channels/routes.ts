import { Elysia } from "elysia";
import { listAnswer } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { send } from "../../http/reply";
import { Deleted } from "../notes/model";
import { ChannelBody, ChannelIdParams, ChannelRecord, ChannelTestAccepted, ListChannelsQuery } from "./model";
import * as ch from "./service";
import { t } from "elysia";

const detail = (summary: string) => ({ detail: { tags: ["channels"], summary } });

/** The workspace's channels, under /api/v1. */
export const channelRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get(
      "/channels",
      ({ ctx, query, request, set }) => listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) => ch.listChannels({ ctx, page })),
      { query: ListChannelsQuery, response: { 200: t.Array(ChannelRecord) }, ...detail("List the workspace's channels (URLs with their secrets masked), oldest first") },
    )
    .post("/channels", async ({ ctx, body }) => send(await ch.createChannel({ ctx, input: body.channel })), {
      body: ChannelBody,
      response: { 201: ChannelRecord },
      ...detail("Add a channel: an Apprise-style URL (mailto:, ntfy(s)://, tgram://, pover://, gotify(s)://, matrix(s)://, https://)"),
    })
    .get("/channels/:id", async ({ ctx, params }) => ch.getChannel({ ctx, id: params.id }), {
      params: ChannelIdParams,
      response: { 200: ChannelRecord },
      ...detail("One channel"),
    })
    .patch("/channels/:id", async ({ ctx, params, body }) => send(await ch.updateChannel({ ctx, id: params.id, input: body.channel })), {
      params: ChannelIdParams,
      body: ChannelBody,
      response: { 200: ChannelRecord },
      ...detail("Change a channel's name, URL or format; saving re-enables a disabled channel"),
    })
    .delete("/channels/:id", async ({ ctx, params }) => send(await ch.deleteChannel({ ctx, id: params.id })), {
      params: ChannelIdParams,
      response: { 200: Deleted },
      ...detail("Delete a channel: its waiting deliveries and its digests go, and streams stop naming it"),
    })
    .post("/channels/:id/test", async ({ ctx, params }) => send(await ch.testChannel({ ctx, id: params.id })), {
      params: ChannelIdParams,
      response: { 202: ChannelTestAccepted },
      ...detail("Send a test message through the queue (even to a disabled channel); its result shows in last_error and last_attempt_at"),
    });
