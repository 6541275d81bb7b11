import { Elysia, t } from "elysia";
import type { AnyAuth } from "../../http/plugins/auth";
import { linesOrFollow } from "./follow-events";
import { LinesPage, LinesQuery } from "./model";

const FOLLOW =
  "With Accept: text/event-stream the answer follows the stream instead (Server-Sent Events): each new line is an event, " +
  "id its cursor, data {\"text\", \"at\"}; Last-Event-ID or ?cursor= resumes after that line, ?last=N sends the newest N first, " +
  "otherwise it starts after the current last line; a comment heartbeat every 25 s. At most 10 open per token, and per workspace a tenth of the server's NOTESTREAM_SSE_MAX (at least 10); past either, 429 with Retry-After.";

const linesDetail = (summary: string) => ({
  tags: ["streams"],
  summary,
  description: FOLLOW,
  responses: {
    200: {
      description: "The lines, or the event stream",
      content: {
        "application/json": { schema: LinesPage },
        "text/event-stream": { schema: t.String({ description: "id: <cursor>\\ndata: {\"text\", \"at\"}\\n\\n per line" }) },
      },
    },
  },
});

/** A stream's lines, read or followed (the append's routes are its slice's: append/route.ts). */
export const streamsRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get("/notes/:id/lines", ({ ctx, params, query, request }) => linesOrFollow({ ctx, by: { id: params.id }, query, request }), {
      params: t.Object({ id: t.String() }),
      query: LinesQuery,
      detail: linesDetail("Read a stream's newest lines, or the lines after a cursor; or follow it live"),
    })
    .get("/notes/by-filename/:filename/lines", ({ ctx, params, query, request }) => linesOrFollow({ ctx, by: { filename: params.filename }, query, request }), {
      params: t.Object({ filename: t.String({ description: "The stream's exact filename, URL-encoded" }) }),
      query: LinesQuery,
      detail: linesDetail("The same, by filename"),
    });
