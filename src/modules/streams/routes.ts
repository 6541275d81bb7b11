import { Elysia, t } from "elysia";
import type { AnyAuth } from "../../http/plugins/auth";
import { send } from "../../http/reply";
import { appendFromRouter } from "./append";
import { AppendBody, AppendResponse } from "./model";

const detail = (summary: string) => ({
  tags: ["streams"],
  summary,
  // The handler reads the body itself (as the boundary's fast path does), so the schema is documented here.
  requestBody: { required: true, content: { "application/json": { schema: AppendBody } } },
});

/**
 * The append's Elysia routes: the same handler as the boundary's fast path (./append.ts), here for
 * the OpenAPI document and for requests that reach the router.
 */
export const streamsRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .post("/notes/by-filename/:filename/append", async ({ ctx, request }) => send(await appendFromRouter(ctx, request)), {
      parse: "none",
      params: t.Object({ filename: t.String({ description: "The stream's exact filename, URL-encoded" }) }),
      response: { 200: AppendResponse, 201: AppendResponse },
      detail: detail("Append a line to a stream by filename; the first write creates it (201)"),
    })
    .post("/notes/:id/append", async ({ ctx, request }) => send(await appendFromRouter(ctx, request)), {
      parse: "none",
      params: t.Object({ id: t.String() }),
      response: { 200: AppendResponse },
      detail: detail("Append a line to a stream by id"),
    });
