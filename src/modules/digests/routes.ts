import { Elysia, t } from "elysia";
import { listAnswer } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { send } from "../../http/reply";
import { Deleted } from "../notes/model";
import { DigestBody, DigestIdParams, DigestRecord, ListDigestsQuery } from "./model";
import * as digests from "./service";

const detail = (summary: string) => ({ detail: { tags: ["digests"], summary } });

/** The workspace's digests, under /api/v1. */
export const digestRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get(
      "/digests",
      ({ ctx, query, request, set }) => listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) => digests.listDigests({ ctx, page })),
      { query: ListDigestsQuery, response: { 200: t.Array(DigestRecord) }, ...detail("List the workspace's digests, oldest first") },
    )
    .post("/digests", async ({ ctx, body }) => send(await digests.createDigest({ ctx, input: body.digest })), {
      body: DigestBody,
      response: { 201: DigestRecord },
      ...detail("Schedule a digest of the workspace's streams to a channel or an address"),
    })
    .get("/digests/:id", async ({ ctx, params }) => digests.getDigest({ ctx, id: params.id }), {
      params: DigestIdParams,
      response: { 200: DigestRecord },
      ...detail("One digest"),
    })
    .patch("/digests/:id", async ({ ctx, params, body }) => send(await digests.updateDigest({ ctx, id: params.id, input: body.digest })), {
      params: DigestIdParams,
      body: DigestBody,
      response: { 200: DigestRecord },
      ...detail("Change a digest"),
    })
    .delete("/digests/:id", async ({ ctx, params }) => send(await digests.deleteDigest({ ctx, id: params.id })), {
      params: DigestIdParams,
      response: { 200: Deleted },
      ...detail("Delete a digest"),
    })
    .post("/digests/:id/send", async ({ ctx, params }) => send(await digests.sendDigestNow({ ctx, id: params.id })), {
      params: DigestIdParams,
      response: { 202: DigestRecord },
      ...detail("Send the digest now, covering what happened since the last; the next one counts from this"),
    });
